"""Which runs a published table speaks for, and calibration of a run against one row of it.

A run is comparable with a published table only like for like: the same split, the same item
selection (none, unless the table states one: no ``run --where/--sample/--exclude``, no subset
file, no loader option that selects items, no ``board --where``), every item of the published
set scored (a ``--limit`` or unfinished run is not), the published item count and content hash
when the table states them, and a benchmark of the table's family (its loaders, or items with
the layout's axes in a ``jsonl:`` file). ``calibrate`` and ``board --reference`` refuse anything else with one line,
unless ``--allow-partial``, which keeps the run and labels it ``not comparable: <reason>``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.reference_tables import (
    REFERENCE_NAMES,
    ReferenceRow,
    ReferenceTable,
    find_row,
    load_reference,
)
from medlens.core.errors import MedlensError, SpecError

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

__all__ = ["REFERENCE_NAMES", "calibrate", "calibration_lines", "comparability", "load_reference"]

NOT_COMPARABLE = "not comparable"
TOLERANCE = 0.02
"""How close a reproduction must come to the same model's published row: ±2 points, the upper
end of the ±1–2 points the GMAI-MMBench wiki sets for calibrating a pipeline; the published
number must also lie inside the run's 95% CI. Both are printed."""


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
    from medlens.sources.gmai_files import OFFICIAL_MD5, file_md5, test_parts

    argument = bench_spec.partition(":")[2].partition("?")[0]
    path = Path(argument).expanduser()
    wanted = [set(text.split()) for text in official]
    try:
        files = test_parts(path) if path.is_dir() else [path]
        found = [file_md5(file) for file in files]
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


def refusal(run: Path | str, table: ReferenceTable, reasons: list[str]) -> MedlensError:
    return MedlensError(
        f"{run}: not comparable with reference {table.name}: {'; '.join(reasons)} "
        "(--allow-partial keeps it, labelled 'not comparable')"
    )


def label(reasons: list[str]) -> str | None:
    """``not comparable: <reasons>`` (None when comparable): the label of every such row."""
    return f"{NOT_COMPARABLE}: {'; '.join(reasons)}" if reasons else None


def check_comparable(name: str, benchmark: str, where: Path | str) -> None:
    """Refuse a published table of another benchmark family beside a run (its loader name)."""
    table = load_reference(name)
    if table.benchmarks and benchmark not in table.benchmarks:
        raise SpecError(
            f"{where}: --reference {name} holds published {'/'.join(table.benchmarks)} scores, "
            f"but the run is on {benchmark!r}; the numbers would not be comparable"
        )


def calibrate(
    run_dir: Path | str,
    reference: str,
    model: str,
    split: str | None = None,
    column: str | None = None,
    source: ScoreSource | None = None,
    allow_partial: bool = False,
) -> dict[str, Any]:
    """Does the run reproduce the published score within its 95% CI, and by how much does it differ?"""
    from medlens.analysis.score_source import RULES, sourced_run
    from medlens.runs.view import RunView

    table = load_reference(reference)
    row = find_row(table, model, split)
    name = _column(table, row, column)
    store = RunView(run_dir)
    items, records = store.items(), store.records()
    axes = {key for item in items for key in item.meta} | {"kind"}
    scored = sum(
        1 for r in records.values() if r.get("error") is None and r.get("score") is not None
    )
    reasons = comparability(table, store.run["spec"], scored, axes, split_rows=[row])
    if reasons and not allow_partial:
        raise refusal(store.path, table, reasons)
    run = sourced_run(store.path, items, records, source or RULES)
    cell = column_cell(table, name, run.items, run.records, store.path)
    reasons += _column_count(table, name, cell)
    if reasons and not allow_partial:
        raise refusal(store.path, table, reasons)
    result = _result(store.path.name, table, row, name, cell, run.source.label, reasons)
    result["protocol"] = _protocol(table, store, run.source, bool(cell["judged"]))
    result["reproduces"] = result["reproduces"] and result["protocol"]["same"]
    return result


def _protocol(table: ReferenceTable, store: Any, source: Any, judged: bool) -> dict[str, Any]:
    """Was the run prompted, read and judged as the published rows were, and what the reading
    moves (the run's extraction sensitivity: medlens's reading − VLMEvalKit's rules, with its
    CI)."""
    from medlens.analysis.artifacts import fresh_results
    from medlens.analysis.protocols import unchecked
    from medlens.runs.view import RunView

    judge = RunView(store.path).judge(source.judge) if source.judged else None
    differences = protocol_differences(table, store.run["spec"], judge, judged)
    sensitivity = fresh_results(store).get("extraction_sensitivity") if differences else None
    return {"same": not differences, "differences": differences,
            "label": DIFFERENT_PROTOCOL if differences else None, "sensitivity": sensitivity,
            "unchecked": list(unchecked(table.layout) if table.benchmarks else ())}  # fmt: skip


def _column(table: ReferenceTable, row: ReferenceRow, column: str | None) -> str:
    present = [c for c in table.columns if row.values.get(c) is not None]
    if column is None:
        defaults = [c for c in ("overall", "mcq_all", "unanchored_closed") if c in present]
        if defaults or len(present) == 1:
            return (defaults or present)[0]
        raise SpecError(
            f"--column: {table.name} has several columns; choose one ({', '.join(present)})"
        )
    if column not in present:
        raise SpecError(
            f"--column {column!r}: {row.model} in {table.name} has {', '.join(present)}"
        )
    return column


def column_cell(
    table: ReferenceTable, name: str, items: list[Any], records: dict[str, Any], where: Path
) -> dict[str, Any]:
    """n, score and CI of the run's items in column `name` of the table's layout."""
    from medlens.analysis.paper_columns import layout_columns

    columns = {c.name: c for c in layout_columns(table.layout)} if table.layout else {}
    if name not in columns:
        if name != "overall":
            raise SpecError(f"--column {name!r}: medlens cannot tell which items it covers "
                            "(a layout column or overall)")  # fmt: skip
        from medlens.analysis.paper_columns import PaperColumn

        columns[name] = PaperColumn("overall", (), "accuracy")
    paper = columns[name]
    if paper.metric == "delta":
        raise SpecError(
            f"--column {name}: a paired Δ; `medlens board --layout {table.layout}` prints it"
        )
    chosen = [i for i in items if paper.matches({**i.meta, "kind": i.kind})]
    if not chosen:
        axes = ", ".join(f"{a}={v}" for a, v in paper.where)
        raise SpecError(f"{where}: no item has {axes}, which column {name} of {table.name} covers")
    scored = [(i, records[i.id]) for i in chosen if i.id in records and records[i.id].get("score") is not None
              and records[i.id].get("error") is None]  # fmt: skip
    if not scored:
        raise SpecError(f"{where}: no scored item in column {name} of {table.name}")
    from medlens.scoring.mmbu import task_cell

    cell = task_cell(scored)
    return {"n": cell["n"], "items": len(chosen), "score": cell["value"], "ci": cell["ci"],
            "judged": paper.judged}  # fmt: skip


def _column_count(table: ReferenceTable, name: str, cell: dict[str, Any]) -> list[str]:
    wanted = table.column_items.get(name)
    if wanted is None or cell["items"] == wanted:
        return []
    return [f"{cell['items']} items in column {name}, the published column has {wanted}"]


def _result(
    run: str, table: ReferenceTable, row: ReferenceRow, column: str, cell: dict[str, Any],
    source: str, reasons: list[str],
) -> dict[str, Any]:  # fmt: skip
    published = row.values[column]
    assert published is not None
    lo, hi = cell["ci"] if cell["ci"] else (cell["score"], cell["score"])
    return {
        "run": run,
        "reference": {
            "name": table.name,
            "model": row.model,
            "split": row.split,
            "selection": row.selection,
            "column": column,
            "score": published,
            "source": table.source_of(row),
        },
        "score_source": source,
        "run_score": {"n": cell["n"], "score": cell["score"], "ci": [lo, hi]},
        "difference": cell["score"] - published,
        "difference_ci": [lo - published, hi - published],
        "tolerance": TOLERANCE,
        "within_tolerance": abs(cell["score"] - published) <= TOLERANCE + 1e-12,
        "inside_ci": bool(lo <= published <= hi),
        "reproduces": abs(cell["score"] - published) <= TOLERANCE + 1e-12
        and bool(lo <= published <= hi)
        and not reasons,
        "comparable": not reasons,
        "not_comparable": label(reasons),
        "same_metric": not cell["judged"] or source != "rules",
    }


def calibration_lines(result: dict[str, Any]) -> list[str]:
    """The text `medlens calibrate` prints."""
    ref, run = result["reference"], result["run_score"]
    lo, hi = run["ci"]
    dlo, dhi = result["difference_ci"]
    lines = [
        f"{result['run']} vs {ref['model']} ({ref['name']} {ref['split']}, column "
        f"{ref['column']}): published {ref['score']:.4f}",
        f"run ({result['score_source']} scores): {run['score']:.4f} (95% CI {lo:.4f}–{hi:.4f}, "
        f"n={run['n']})",
        f"difference run − published: {result['difference']:+.4f} (95% CI {dlo:+.4f} to {dhi:+.4f})",
    ]
    protocol = result.get("protocol") or {"same": True}
    tolerance = 100 * result["tolerance"]
    lines.append(
        f"within ±{tolerance:.0f} points of the published number: "
        f"{'yes' if result['within_tolerance'] else 'no'} ({100 * result['difference']:+.1f} points); "
        f"published number inside the run's 95% CI: {'yes' if result['inside_ci'] else 'no'}"
    )
    if result["not_comparable"]:
        lines.append(f"{result['not_comparable']}: no verdict on reproduction")
        if not protocol["same"]:  # said too, so one look shows every difference
            lines.append(
                f"protocol differs from the published rows': {'; '.join(protocol['differences'])}"
            )
    elif not protocol["same"]:
        lines.append(f"{protocol['label']} ({'; '.join(protocol['differences'])}): no verdict "
                     f"on reproduction{_sensitivity_text(protocol.get('sensitivity'))}")  # fmt: skip
    else:
        verdict = "reproduces" if result["reproduces"] else "does NOT reproduce"
        lines.append(f"the run {verdict} the published number (both criteria above)")
    if protocol.get("unchecked"):
        lines.append(f"not checked: {'; '.join(protocol['unchecked'])}")
    lines.append(f"source: {ref['source']}")
    if not result["same_metric"]:
        lines.append(
            f"caution: the published {ref['column']} is an LLM judge's score, the run's is "
            "medlens's rule score; they measure different things (--score judge:NAME)"
        )
    return lines


def _sensitivity_text(sensitivity: Mapping[str, Any] | None) -> str:
    """``; extraction sensitivity medlens − VLMEvalKit rules +0.012 (95% CI …)``."""
    if not sensitivity or sensitivity.get("difference") is None:
        return ""
    ci = sensitivity.get("ci")
    shown = f" (95% CI {ci[0]:+.3f} to {ci[1]:+.3f})" if ci else ""
    return f"; extraction sensitivity (medlens − VLMEvalKit rules) {sensitivity['difference']:+.3f}{shown}"
