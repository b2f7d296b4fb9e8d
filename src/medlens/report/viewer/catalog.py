"""What the viewer shows: the runs it was given, grouped by benchmark, one row per item.

Everything is read once when the viewer starts (items, records, judge verdicts); a page then
filters the group's rows in memory (a 26,000-item run is ~10 ms a filter) and renders one page.
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
from medlens.runs.finding import runs_below
from medlens.runs.store import RunStore

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


@dataclass(frozen=True)
class Row:
    """One item of a group, with its outcome in each of the group's runs (in run order)."""

    id: str
    item: Item
    outcomes: tuple[str, ...]
    haystack: str
    """Lower-cased question, options, gold and every run's answer, for the text filter."""


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
        if (path / "run.json").is_file():
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
    runs = [_read_run(path) for path in find_runs(paths)]
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


def _read_run(path: Path) -> tuple[Path, dict[str, Any], ViewedRun]:
    store = RunStore.open(path)
    spec = store.run.get("spec", {})
    viewed = ViewedRun(
        name=path.name,
        path=path,
        model=str(spec.get("model", "")),
        probe=spec.get("probe"),
        seed=int(spec.get("seed") or 0),
        items={item.id: item for item in store.items()},
        records=store.records(),
        verdicts=_verdicts(path),
    )
    return path, dict(spec.get("benchmark") or {}), viewed


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
    from medlens.judges.store import judge_names
    from medlens.judges.verdicts import read_judgements

    out: dict[str, dict[str, str]] = {}
    for name in judge_names(run_dir):
        _, lines = read_judgements(run_dir, name)
        words: dict[str, list[str]] = {}
        for line in sorted(lines, key=lambda line: int(line.get("repeat") or 0)):
            words.setdefault(str(line["id"]), []).append(verdict_text(line))
        out[name] = {item: "; ".join(texts) for item, texts in words.items()}
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
    order: dict[str, Item] = {}
    for run in runs:
        for item_id, item in run.items.items():
            order.setdefault(item_id, item)
    rows = tuple(_row(item, runs) for item in order.values())
    return Group(
        key=key,
        label=label,
        runs=tuple(runs),
        rows=rows,
        positions={row.id: i for i, row in enumerate(rows)},
        axes=_filter_axes(order.values()),
        kinds=tuple(sorted({item.kind for item in order.values()})),
    )


def _row(item: Item, runs: Sequence[ViewedRun]) -> Row:
    records = [run.records.get(item.id) for run in runs]
    text = [item.question, item.context or "", *item.options.values(), str(item.answer or "")]
    text += [str(record.get("output") or "") for record in records if record]
    return Row(
        id=item.id,
        item=item,
        outcomes=tuple(outcome(record) for record in records),
        haystack="\n".join([item.id, *text]).casefold(),
    )


def outcome(record: Record | None) -> str:
    """One of OUTCOMES: the report's reading of a record, with ``right`` for a score of 1."""
    if record is None:
        return "unanswered"
    reading = report_outcome(dict(record))
    return "right" if reading == "correct" else reading


def _filter_axes(items: Iterable[Item]) -> dict[str, tuple[str, ...]]:
    values: dict[str, set[str]] = {}
    for item in items:
        for axis, value in item.meta.items():
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
    for row in group.rows:
        meta = row.item.meta
        if any(meta.get(axis) != value for axis, value in wanted):
            continue
        if query.kind and row.item.kind != query.kind:
            continue
        if query.outcome and not (
            row.outcomes[column] == query.outcome
            if column is not None
            else query.outcome in row.outcomes
        ):
            continue
        if needle and needle not in row.haystack:
            continue
        rows.append(row)
    return rows


def page_of(rows: Sequence[Row], page: int, per_page: int) -> tuple[Sequence[Row], int, int]:
    """(the rows of page `page`, that page number clamped to 1..pages, the number of pages)."""
    pages = max(1, -(-len(rows) // per_page))
    page = min(max(1, page), pages)
    start = (page - 1) * per_page
    return rows[start : start + per_page], page, pages
