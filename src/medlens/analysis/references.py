"""Calibration of a run against one row of a published table.

A run is comparable with a published table only like for like: the same split, the same item
selection (none, unless the table states one: no ``run --where/--sample/--exclude``, no subset
file, no loader option that selects items, no ``board --where``), every item of the published
set scored (a ``--limit`` or unfinished run is not), the published item count and content hash
when the table states them, and a benchmark of the table's family (its loaders, or items with
the layout's axes in a ``jsonl:`` file). ``calibrate`` and ``board --reference`` refuse anything else with one line,
unless ``--allow-partial``, which keeps the run and labels it ``not comparable: <reason>``.

Which rows a run is comparable with is decided by one rule, row by row
(:mod:`medlens.analysis.comparability`), here as on ``board`` and a study's boards.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.comparability import (
    DIFFERENT_PROTOCOL,
    NOT_COMPARABLE,
    READING_PROTOCOLS,
    RowVerdict,
    comparability,
    comparable_rows,
    label,
    protocol_differences,
    refusal,
    selection_text,
)
from medlens.analysis.reference_tables import (
    REFERENCE_NAMES,
    ReferenceRow,
    ReferenceTable,
    find_row,
    load_reference,
)
from medlens.core.errors import SpecError

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

__all__ = [
    "DIFFERENT_PROTOCOL",
    "NOT_COMPARABLE",
    "READING_PROTOCOLS",
    "REFERENCE_NAMES",
    "RowVerdict",
    "calibrate",
    "calibration_lines",
    "comparability",
    "comparable_rows",
    "label",
    "load_reference",
    "protocol_differences",
    "refusal",
    "selection_text",
]

TOLERANCE = 0.02
"""How close a reproduction must come to the same model's published row: ±2 points, the upper
end of the ±1–2 points the GMAI-MMBench wiki sets for calibrating a pipeline; the published
number must also lie inside the run's 95% CI. Both are printed."""


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
    reasons = comparable_rows(table, [row], store.run["spec"], scored, axes).reasons
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
