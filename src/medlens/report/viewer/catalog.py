"""What the viewer shows: the runs it was given, grouped by benchmark, one row per item.

What the list filters need is read when the viewer starts: each item's id, axes and kind
(``items.jsonl``, one parse per distinct file), each run's outcomes (its derived score file;
the records only when that file is stale or absent) and judge verdicts; records are indexed and
items and records built when a page shows them (``viewer.lazy``). A page filters the group's
rows in memory (a 26,000-item run is ~10 ms a filter; the text filter reads every record once,
on its first use) and renders one page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import CANONICAL_AXES, Item
from medlens.core.records import Record
from medlens.report.html import outcome as report_outcome
from medlens.report.viewer.lazy import LazyItems
from medlens.runs.finding import runs_below
from medlens.runs.layout import is_run
from medlens.runs.view import RecordIndex, RunView

OUTCOMES: tuple[str, ...] = (
    "right", "wrong", "partial", "unparsed", "refused", "empty", "error", "no gold", "unanswered",
)  # fmt: skip
"""An item's outcome in one run; ``unanswered``: the run has no record of it (yet)."""
MAX_AXIS_VALUES = 300
"""Axes with more distinct values (image ids, free-text fields) get no filter menu."""
SKIPPED_AXES = frozenset({"image_id", "convert_rgb", "box_format"})


@dataclass(frozen=True)
class ViewedRun:
    """One run as the viewer shows it."""

    name: str
    """Unique within the viewer: the folder name (with its parent's when two runs share it)."""
    path: Path
    model: str
    probe: str | None
    seed: int
    items: Mapping[str, Item]
    records: Mapping[str, Record]
    verdicts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    """Judge name → item id → its verdict in words."""
    outcomes: Mapping[str, str] = field(default_factory=dict)
    """Item id → its outcome (one of OUTCOMES but ``unanswered``)."""


@dataclass(slots=True)
class Row:
    """One item of a group, with its outcome in each of the group's runs (in run order)."""

    id: str
    meta: Mapping[str, Any]
    kind: str
    outcomes: tuple[str, ...]
    items: Mapping[str, Item] = field(repr=False, compare=False)
    """Where the row's ``Item`` is built on first use (one run's items)."""

    @property
    def item(self) -> Item:
        return self.items[self.id]


@dataclass(frozen=True)
class Group:
    """Runs on one benchmark, side by side on the union of their items."""

    key: str
    label: str
    runs: tuple[ViewedRun, ...]
    rows: tuple[Row, ...]
    positions: Mapping[str, int]
    axes: Mapping[str, tuple[str, ...]]
    """Filterable axis → its values, canonical axes first."""
    kinds: tuple[str, ...]
    haystacks: list[str] = field(default_factory=list, compare=False, repr=False)
    """Per row: lower-cased id, question, context, options, gold and every run's answer, for
    the text filter (filled on its first use)."""

    def haystack(self, index: int) -> str:
        if not self.haystacks:
            records = [
                run.records.every() if isinstance(run.records, RecordIndex) else run.records
                for run in self.runs
            ]
            built = [_haystack(row, records) for row in self.rows]
            self.haystacks[:] = built  # whole or not at all: pages run in several threads
        return self.haystacks[index]


@dataclass(frozen=True)
class Query:
    """One list page's filters (all optional) and its page."""

    axes: Mapping[str, str] = field(default_factory=dict)
    kind: str = ""
    outcome: str = ""
    of: str = ""
    """Run name the outcome filter looks at; empty: any run of the group."""
    text: str = ""
    page: int = 1
    per_page: int = 50


def find_runs(paths: Sequence[Path]) -> list[Path]:
    """Run directories among `paths`: each one a run, or a folder with runs below it."""
    found: list[Path] = []
    for path in paths:
        if is_run(path):
            found.append(path)
            continue
        if not path.is_dir():
            raise MedlensError(f"{path}: no such run directory or folder of runs")
        below = runs_below(path)
        if not below:
            raise MedlensError(f"{path}: not a run directory, and has no run directories below it")
        found.extend(below)
    unique = list(dict.fromkeys(p.resolve() for p in found))
    return unique


def load_catalog(paths: Sequence[Path]) -> tuple[Group, ...]:
    """Every run found under `paths`, read once and grouped by benchmark."""
    shared: dict[str, Mapping[str, Item]] = {}
    runs = [_read_run(path, shared) for path in find_runs(paths)]
    names = _unique_names([run[0] for run in runs])
    by_key: dict[str, list[ViewedRun]] = {}
    benches: dict[str, dict[str, Any]] = {}
    for (_, bench, viewed), name in zip(runs, names, strict=True):
        key = str(bench.get("spec") or bench.get("name"))
        benches.setdefault(key, bench)
        by_key.setdefault(key, []).append(_renamed(viewed, name))
    labels = distinct_labels(benches)
    return tuple(_group(key, labels[key], group_runs) for key, group_runs in by_key.items())


def distinct_labels(benches: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``name split`` per benchmark spec; two benchmarks with one label (two "gmai val" files)
    get their file's name and, if still alike, their content hash's first 8 characters."""
    labels = {key: f"{b.get('name')} {b.get('split', '')}".strip() for key, b in benches.items()}
    for widen in (_file_part, _hash_part):
        counts = Counter(labels.values())
        labels = {
            key: f"{label} ({widen(key, benches[key])})" if counts[label] > 1 else label
            for key, label in labels.items()
        }
    return labels


def _file_part(spec: str, bench: Mapping[str, Any]) -> str:
    argument = spec.partition(":")[2].partition("?")[0].rstrip("/")
    return Path(argument).name or spec


def _hash_part(spec: str, bench: Mapping[str, Any]) -> str:
    return str(bench.get("content_hash") or spec)[:8]


def _read_run(
    path: Path, shared: dict[str, Mapping[str, Item]]
) -> tuple[Path, dict[str, Any], ViewedRun]:
    """One run; runs whose items are the same bytes share one parse of them."""
    view = RunView(path)
    spec = view.spec
    content = view.items_sha256()
    if content not in shared:
        shared[content] = LazyItems(view.raw_items())
    records = view.record_index()
    viewed = ViewedRun(
        name=path.name,
        path=path,
        model=str(spec.get("model", "")),
        probe=spec.get("probe"),
        seed=int(spec.get("seed") or 0),
        items=shared[content],
        records=records,
        verdicts=_verdicts(path),
        outcomes=_outcomes(path, records),
    )
    return path, dict(spec.get("benchmark") or {}), viewed


def _outcomes(path: Path, records: RecordIndex) -> Mapping[str, str]:
    """Item id → outcome: from the run's fresh derived score file (status and main score, as
    ``outcome`` reads a record), else from its records."""
    from medlens.analysis.artifacts import fresh_score_file

    derived = fresh_score_file(path)
    if derived is None:
        return {item_id: outcome(record) for item_id, record in records.every().items()}
    from medlens.analysis.score_file import read_columns

    table = read_columns(derived[0], ["id", "score", "status"])
    ids = table["id"].to_pylist()
    scores = table["score"].to_pylist()
    statuses = table["status"].to_pylist()
    return {
        item_id: _outcome_of(status, score)
        for item_id, status, score in zip(ids, statuses, scores, strict=True)
    }


def _outcome_of(status: str, score: float | None) -> str:
    if status != "ok":
        return status  # error, unparsed, refused, empty
    if score is None or score != score:  # NaN: no gold
        return "no gold"
    return "right" if score == 1 else ("wrong" if score == 0 else "partial")


def _renamed(run: ViewedRun, name: str) -> ViewedRun:
    from dataclasses import replace

    return replace(run, name=name)


def _unique_names(paths: Sequence[Path]) -> list[str]:
    """Folder names, with the parent folder prefixed where two runs share a name."""
    counts: dict[str, int] = {}
    for path in paths:
        counts[path.name] = counts.get(path.name, 0) + 1
    names = [p.name if counts[p.name] == 1 else f"{p.parent.name}/{p.name}" for p in paths]
    return [
        name if names.count(name) == 1 else str(path)
        for name, path in zip(names, paths, strict=True)
    ]


def _verdicts(run_dir: Path) -> dict[str, dict[str, str]]:
    """Each judge's verdicts in words, per item (repeats joined)."""
    from medlens.judges.verdicts import read_judgements, read_verdicts
    from medlens.runs.judgements import judge_names

    out: dict[str, dict[str, str]] = {}
    for name in judge_names(run_dir):
        _, lines = read_judgements(run_dir, name)
        missing = read_verdicts(run_dir, name).missing  # the reading every table uses
        words: dict[str, list[str]] = {}
        for line in sorted(lines, key=lambda line: int(line.get("repeat") or 0)):
            words.setdefault(str(line["id"]), []).append(verdict_text(line))
        out[name] = {
            item: "; ".join(texts) + (f" → no verdict ({missing[item]})" if item in missing else "")
            for item, texts in words.items()
        }
    return out


def verdict_text(line: Mapping[str, Any]) -> str:
    """`equivalent (rule)`, `not equivalent: reason`, `consistency 8 · …: reason`, `error: …`."""
    if line.get("by") == "rule":
        return f"settled by the rules (score {line.get('score')})"
    if line.get("status") != "ok":
        error = line.get("error") or {}
        return f"{line.get('status')}: {error.get('message', '')}".strip()
    verdict = line.get("verdict") or {}
    reason = str(verdict.get("reason") or "")
    if isinstance(verdict.get("equivalent"), bool):
        head = "equivalent" if verdict["equivalent"] else "not equivalent"
    elif isinstance(verdict.get("scores"), dict):
        head = " · ".join(f"{k} {v}" for k, v in verdict["scores"].items())
    else:
        head = f"score {line.get('score')}"
    return f"{head}: {reason}" if reason else head


def _group(key: str, label: str, runs: Sequence[ViewedRun]) -> Group:
    owner: dict[str, ViewedRun] = {}
    for run in runs:
        for item_id in run.items:
            owner.setdefault(item_id, run)
    rows = tuple(_row(item_id, run.items, runs) for item_id, run in owner.items())
    return Group(
        key=key,
        label=label,
        runs=tuple(runs),
        rows=rows,
        positions={row.id: i for i, row in enumerate(rows)},
        axes=_filter_axes(row.meta for row in rows),
        kinds=tuple(sorted({row.kind for row in rows})),
    )


def _row(item_id: str, items: Mapping[str, Item], runs: Sequence[ViewedRun]) -> Row:
    raw = items.raw[item_id] if isinstance(items, LazyItems) else items[item_id].to_json()
    meta = raw.get("meta") or {}  # strings: items.jsonl holds Item.meta as written
    return Row(
        id=item_id,
        meta=meta,
        kind=str(raw["kind"]),
        outcomes=tuple(run.outcomes.get(item_id, "unanswered") for run in runs),
        items=items,
    )


def _haystack(row: Row, by_run: Sequence[Mapping[str, Record]]) -> str:
    """Lower-cased id, question, context, options, gold and every run's answer of one row,
    from its item's JSON object (no ``Item`` is built for the filter)."""
    items = row.items
    raw = items.raw[row.id] if isinstance(items, LazyItems) else items[row.id].to_json()
    answer = raw.get("answer")
    if row.kind == "detect" and answer is not None:  # as str(Item.answer) shows boxes
        answer = tuple(tuple(float(v) for v in box) for box in answer)
    text = [row.id, raw["question"], raw.get("context") or "", *(raw.get("options") or {}).values(),
            str(answer or "")]  # fmt: skip
    for run_records in by_run:
        record = run_records.get(row.id)
        if record:
            text.append(str(record.get("output") or ""))
    return "\n".join(text).casefold()


def outcome(record: Record | None) -> str:
    """One of OUTCOMES: the report's reading of a record, with ``right`` for a score of 1."""
    if record is None:
        return "unanswered"
    reading = report_outcome(dict(record))
    return "right" if reading == "correct" else reading


def _filter_axes(metas: Iterable[Mapping[str, str]]) -> dict[str, tuple[str, ...]]:
    values: dict[str, set[str]] = {}
    for meta in metas:
        for axis, value in meta.items():
            if axis not in SKIPPED_AXES and value:
                values.setdefault(axis, set()).add(value)
    kept = {a: v for a, v in values.items() if len(v) <= MAX_AXIS_VALUES}
    order = [a for a in CANONICAL_AXES if a in kept] + sorted(set(kept) - set(CANONICAL_AXES))
    return {axis: tuple(sorted(kept[axis])) for axis in order}


def matching(group: Group, query: Query) -> list[Row]:
    """The group's rows that pass every filter of `query`, in benchmark order."""
    runs = [run.name for run in group.runs]
    column = runs.index(query.of) if query.of in runs else None
    needle = query.text.casefold().strip()
    wanted = [(axis, value) for axis, value in query.axes.items() if value]
    if not (wanted or query.kind or query.outcome or needle):
        return list(group.rows)
    rows = []
    for index, row in enumerate(group.rows):
        meta = row.meta
        if any(meta.get(axis) != value for axis, value in wanted):
            continue
        if query.kind and row.kind != query.kind:
            continue
        if query.outcome and not (
            row.outcomes[column] == query.outcome
            if column is not None
            else query.outcome in row.outcomes
        ):
            continue
        if needle and needle not in group.haystack(index):
            continue
        rows.append(row)
    return rows


def page_of(rows: Sequence[Row], page: int, per_page: int) -> tuple[Sequence[Row], int, int]:
    """(the rows of page `page`, that page number clamped to 1..pages, the number of pages)."""
    pages = max(1, -(-len(rows) // per_page))
    page = min(max(1, page), pages)
    start = (page - 1) * per_page
    return rows[start : start + per_page], page, pages
