"""Which runs a published table speaks for: the one rule of comparability (issue 49).

A run is comparable with a published table only like for like: the same split, the same item
selection (none, unless the table states one: no ``run --where/--sample/--exclude``, no subset
file, no loader option that selects items, no ``board --where``), every item of the published
set scored (a ``--limit`` or unfinished run is not), the published item count and content hash
when the table states them, and a benchmark of the table's family (its loaders, or items with
the layout's axes in a ``jsonl:`` file).

A table may hold rows of several item sets (a user's CSV with a row per subset, say): each item
set is judged on its own (:func:`comparable_rows`), so a run is comparable with the rows of its
own item set only. ``calibrate`` (one row), ``board`` (the rows it shows beside the runs) and a
study's boards (checked before the study's first request) all ask :func:`comparable_rows`;
whoever refuses says so with :func:`refusal`, whoever keeps the run labels it with
:func:`label` (``not comparable: <reasons>``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.analysis.reference_tables import ReferenceRow, ReferenceTable
from medlens.core.errors import MedlensError

NOT_COMPARABLE = "not comparable"


def selection_text(spec: Mapping[str, Any], where: str = "") -> str:
    """How the run's items were chosen from the split, in one line ("" when they were not)."""
    from medlens.execution.selection import recipe_text

    parts = []
    bench = str((spec.get("benchmark") or {}).get("spec", ""))
    options = [o for o in bench.partition("?")[2].split("&") if o and not o.startswith("split=")]
    if options:
        parts.append("loader options " + "&".join(options))
    if spec.get("subset"):
        parts.append("subset: " + recipe_text(spec["subset"].get("recipe", {})))
    if spec.get("selection"):
        parts.append(recipe_text(spec["selection"].get("recipe", {})))
    if where.strip():
        parts.append(f"board --where {where.strip()}")
    return "; ".join(parts)


def comparability(
    table: ReferenceTable,
    spec: Mapping[str, Any],
    scored: int,
    axes: Collection[str],
    where: str = "",
    split_rows: list[ReferenceRow] | None = None,
) -> list[str]:
    """Why a run is not comparable with `table` (empty: it is).

    `scored`: items the run scored; `axes`: its items' axes (a layout's shape stands in for the
    loader name); `split_rows`: the rows to compare with (default: every row of the table).
    """
    from medlens.analysis.paper_columns import missing_axes

    bench = spec.get("benchmark") or {}
    reasons = []
    loader = str(bench.get("name", ""))
    # a user's own file of the paper's shape (jsonl:) may hold the published items; any other
    # loader holds another benchmark, whatever its axes
    shaped = (
        loader == "jsonl" and table.layout is not None and not missing_axes(table.layout, set(axes))
    )
    if table.benchmarks and loader not in table.benchmarks and not shaped:
        reasons.append(f"a {loader} run beside published {'/'.join(table.benchmarks)} scores")
    rows = split_rows if split_rows is not None else list(table.rows)
    splits = sorted({row.split for row in rows})
    if str(bench.get("split")) not in splits:
        reasons.append(f"split {bench.get('split')}, the published rows are on {', '.join(splits)}")
    chosen = selection_text(spec, where)
    published = sorted({row.selection for row in rows})
    if chosen not in published:
        shown = ", ".join(p or "the whole split" for p in published)
        reasons.append(f"selection {chosen or 'the whole split'}, published on {shown}")
    n_items = int(bench.get("n_items") or 0)
    if scored < n_items:
        reasons.append(f"{scored} of {n_items} items scored (--limit, errors or unfinished)")
    reasons += _item_set_reasons(table, rows, bench, n_items)
    return reasons


@dataclass(frozen=True)
class RowVerdict:
    """What :func:`comparable_rows` found for one run."""

    rows: list[ReferenceRow]
    """The rows the run is comparable with; when none is, the rows of the item set that comes
    closest (fewest reasons), whose reasons are `reasons`."""
    reasons: list[str]
    """Empty: the run is comparable with `rows`."""


def item_set(row: ReferenceRow) -> tuple[str, str, int | None, str, str]:
    """What a row's numbers were computed on: split, selection, count, content hash, MD5s."""
    return (row.split, row.selection, row.n_items, row.text.get("content_hash", ""),
            row.text.get("official_md5", ""))  # fmt: skip


def comparable_rows(
    table: ReferenceTable,
    rows: Sequence[ReferenceRow],
    spec: Mapping[str, Any],
    scored: int,
    axes: Collection[str],
    where: str = "",
) -> RowVerdict:
    """The one rule of comparability: the rows of `rows` the run (`spec`, `scored` items,
    `axes`) is like for like with, each item set of the table judged on its own."""
    groups: dict[tuple[str, str, int | None, str, str], list[ReferenceRow]] = {}
    for row in rows:
        groups.setdefault(item_set(row), []).append(row)
    kept: list[ReferenceRow] = []
    nearest: tuple[list[str], list[ReferenceRow]] | None = None
    for group in groups.values():
        reasons = comparability(table, spec, scored, axes, where, split_rows=group)
        if not reasons:
            kept += group
        elif nearest is None or len(reasons) < len(nearest[0]):
            nearest = (reasons, group)
    if kept or nearest is None:
        return RowVerdict([row for row in rows if row in kept], [])
    return RowVerdict(nearest[1], nearest[0])


def _item_set_reasons(
    table: ReferenceTable, rows: list[ReferenceRow], bench: Mapping[str, Any], n_items: int
) -> list[str]:
    """The published item count, content hash and official files' MD5s the rows state."""
    reasons = []
    counts = {row.n_items for row in rows if row.n_items is not None}
    counts |= {table.n_items} if table.n_items is not None and not counts else set()
    if counts and n_items not in counts:
        known = table.named_counts.get(n_items)
        shown = f"{n_items} items ({known})" if known else f"{n_items} items"
        reasons.append(f"{shown}, the published set has {'/'.join(map(str, sorted(counts)))}")
    hashes = {row.text["content_hash"] for row in rows if row.text.get("content_hash")}
    if hashes and str(bench.get("content_hash")) not in hashes:
        reasons.append(
            f"content hash {str(bench.get('content_hash'))[:12]} is not the published set's"
        )
    official = {row.text["official_md5"] for row in rows if row.text.get("official_md5")}
    other_family = bool(table.benchmarks) and str(bench.get("name")) not in table.benchmarks
    if official and not other_family:  # another benchmark family is refused already
        reasons += official_file_reasons(str(bench.get("spec", "")), official)
    return reasons


def official_file_reasons(bench_spec: str, official: Collection[str]) -> list[str]:
    """Is the run's benchmark file (or folder of TEST parts) the official one, by MD5?"""
    from medlens.sources.gmai_files import OFFICIAL_MD5, test_parts

    argument = bench_spec.partition(":")[2].partition("?")[0]
    path = Path(argument).expanduser()
    wanted = [set(text.split()) for text in official]
    try:
        files = test_parts(path) if path.is_dir() else [path]
        found = [_md5_of(file) for file in files]
    except (OSError, MedlensError):
        return [f"cannot check the official files' MD5 ({argument} is not readable)"]
    if any(set(found) == digests for digests in wanted):
        return []
    names = sorted({OFFICIAL_MD5.get(d, d[:8] + "…") for ds in wanted for d in ds})
    unofficial = [f.name for f, d in zip(files, found, strict=True) if d not in OFFICIAL_MD5]
    what = (
        f"not the official file ({', '.join(unofficial[:3])}: MD5 differs)"
        if unofficial
        else ("official files of another set")
    )
    shown = (
        names[0]
        if len(names) == 1
        else f"{len(names)} official files ({names[0].rsplit('_', 1)[0]}_*)"
    )
    return [f"{what}; the published rows are on {shown}"]


_MD5S: dict[tuple[str, int, int], str] = {}
"""MD5s of benchmark files by (path, size, mtime): a board checks each item set of a table."""


def _md5_of(file: Path) -> str:
    from medlens.sources.gmai_files import file_md5

    info = file.stat()
    key = (str(file.resolve()), info.st_size, info.st_mtime_ns)
    if key not in _MD5S:
        _MD5S[key] = file_md5(file)
    return _MD5S[key]


READING_PROTOCOLS: dict[str, dict[str, Any]] = {
    # GMAI-MMBench's leaderboard was read by VLMEvalKit (see VLMEVAL_COMPAT.md); its FAQ asks
    # that scores from other scripts be labelled "non-official protocol".
    "gmai": {"prompt": "vlmeval", "extract": "vlmeval", "probe": None},
}
"""How each family's published rows read the models' answers (``report.card`` shows it too)."""
DIFFERENT_PROTOCOL = "comparable item set, different reading protocol"


def protocol_differences(
    table: ReferenceTable,
    spec: Mapping[str, Any],
    judge: Mapping[str, Any] | None = None,
    judged: bool = False,
) -> list[str]:
    """How the run was prompted, read and judged otherwise than the published rows were
    (``analysis.protocols``; `judge`: the judge.json of the judge whose scores are compared,
    `judged`: a column the paper's judge scored)."""
    if not table.benchmarks:  # a user's own table: its rows were made as the user says
        return []
    from medlens.analysis.protocols import differences

    return differences(table.layout, spec, judge, judged)


def refusal(
    run: Path | str,
    table: ReferenceTable,
    reasons: list[str],
    keep: str = "--allow-partial keeps it",
) -> MedlensError:
    """The one-line refusal; `keep` says how to keep the run instead (a study file's key)."""
    return MedlensError(
        f"{run}: not comparable with reference {table.name}: {'; '.join(reasons)} "
        f"({keep}, labelled 'not comparable')"
    )


def label(reasons: list[str]) -> str | None:
    """``not comparable: <reasons>`` (None when comparable): the label of every such row."""
    return f"{NOT_COMPARABLE}: {'; '.join(reasons)}" if reasons else None
