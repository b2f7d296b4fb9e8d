"""The content of the full reports (markdown, HTML, xlsx), computed once from a run directory.

Each renderer lays out the same sections: protocol; overall score vs random baseline; per-axis
tables; the worst cells; the deficiency profile; extraction sensitivity; limitations. This module
owns the assembly (:func:`build_report`), the protocol rows, the worst cells and heatmap, the
closed/open rows and the hints; the per-axis rows are ``axis_rows``, the deficiency profile
``deficiency``, the limitations ``limitations``, and how shares are written ``percent_text``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.slices import Cell
from medlens.execution.selection import provenance_rows
from medlens.report.axis_rows import (
    PRIMARY_AXES,
    AxisRow,
    axis_rows,
    coverage_cell,
    worst_cell_axes,
)
from medlens.report.deficiency import deficiency_rows, suspect_summary
from medlens.report.diff_text import fmt_diff_ci
from medlens.report.limitations import limitations
from medlens.report.percent_text import images_text, percent, percent_ci
from medlens.report.source_label import score_rows
from medlens.scoring.closed_open import pairing_text
from medlens.stats.cells import DEFAULT_MIN_N

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

__all__ = [  # the names renderers, tests and users import from here (some owned next door)
    "PRIMARY_AXES",
    "AxisRow",
    "ReportData",
    "answers_hint",
    "build_report",
    "closed_open_cells",
    "closed_open_rows",
    "coverage_cell",
    "fmt_diff_ci",
    "images_text",
    "percent",
    "percent_ci",
    "protocol_rows",
    "secondary_text",
    "strategy_text",
    "suspect_summary",
    "worst_cell_axes",
]

WORST_K = 10
HEATMAP_AXES = ("department", "granularity")
EXPORT_HINT = "medlens export {run} --format gmai-submission"
RATINGS_HINT = "medlens ratings export {run} --sample 100 --output ratings.xlsx"


def answers_hint(run: Path | str) -> tuple[str, str]:
    """(what to do, the command) for answers without gold: a submission file when every item
    is multiple-choice (what `export --format gmai-submission` takes), else a sheet for people
    to rate the answers (HealthSearchQA, LiveQA …), so the hint never names a refused export."""
    from medlens.report.export import SUBMISSION_KINDS
    from medlens.runs.view import RunView

    folder = Path(run)
    kinds = {item.kind for item in RunView(folder).items()} if folder.is_dir() else set()
    if kinds <= set(SUBMISSION_KINDS):
        return "Export the predictions with", EXPORT_HINT.format(run=run)
    return "Have people rate the answers with", RATINGS_HINT.format(run=run)


@dataclass(frozen=True)
class ReportData:
    """Everything a full report shows."""

    run: str
    results: dict[str, Any]
    protocol: tuple[tuple[str, str], ...]
    axes: dict[str, list[AxisRow]]
    """Primary axes first, then the other breakdowns (axes with one value are left out)."""
    worst: list[Cell]
    heatmap: tuple[list[str], list[str], dict[tuple[str, str], Cell]] | None
    deficiency: tuple[tuple[str, str], ...]
    limitations: tuple[str, ...]

    @property
    def has_answers(self) -> bool:
        return bool(self.results["has_answers"])

    @property
    def export_hint(self) -> str:
        return answers_hint(self.run)[1]

    @property
    def export_lead(self) -> str:
        return answers_hint(self.run)[0]


def build_report(run_dir: Path, score: ScoreSource | None = None) -> ReportData:
    """Rebuild results.json and derive every section of the report (scores from `score`)."""
    from medlens.report import load_results
    from medlens.report.estimated import estimate_rows
    from medlens.runs.view import RunView

    results = load_results(run_dir, score)
    run_json = RunView(run_dir).run
    axes = axis_rows(results)
    worst: list[Cell] = []
    heatmap = None
    if results["has_answers"] and results["overall"]["n"]:
        worst, heatmap = _cube_views(run_dir, worst_cell_axes(axes), score)
    return ReportData(
        run=str(run_dir),
        results=results,
        protocol=protocol_rows(results, run_json) + estimate_rows(run_dir, results["spec"]),
        axes=axes,
        worst=worst,
        heatmap=heatmap,
        deficiency=deficiency_rows(results, axes),
        limitations=limitations(results, axes),
    )


def protocol_rows(results: dict[str, Any], run_json: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """What was run, how, and when (from results.json and run.json)."""
    spec = results["spec"]
    bench = spec["benchmark"]
    counts = results["counts"]
    return (
        ("benchmark", f"{bench.get('description') or bench['name']} ({bench['spec']})"),
        ("split", str(bench["split"])),
        (
            "items",
            f"{bench['n_items']} ({counts['records']} with a record, "
            f"{counts['errors']} errored, {counts['pending']} "
            f"{'not asked (adaptive run)' if spec.get('adaptive') else 'pending'})",
        ),
        ("model", str(spec["model"])),
        ("prompt style", str(spec["prompt"])),
        ("prompting strategy", strategy_text(results)),
        ("extraction", str(spec["extract"])),
        ("probe", str(spec.get("probe") or "none")),
        ("seed", str(spec.get("seed", 0))),
        ("medlens version", str(run_json.get("medlens_version", ""))),
        ("date", str(run_json.get("created", ""))),
        ("benchmark content hash", str(bench.get("content_hash", ""))[:16]),
        *provenance_rows(spec),
        *_manual_rows(results),
        *score_rows(results),
    )


def strategy_text(results: dict[str, Any]) -> str:
    """The strategy, its exemplar source and self-consistency agreement, in one line."""
    recorded = results["spec"].get("strategy") or {}
    text = str(recorded.get("name", "zero-shot"))
    if recorded.get("exemplars"):
        text += f" (exemplars from {recorded['exemplars']['spec']})"
    votes = results.get("self_consistency")
    if votes:
        low, high = votes["ci"]
        text += (
            f"; self-consistency agreement {votes['agreement']:.3f} [{low:.3f}, {high:.3f}], "
            f"n={votes['n']}, unanimous {votes['unanimous']}, ties {votes.get('ties', 0)} "
            "(a tie goes to the answer drawn first)"
        )
    refined = results.get("ensemble_refinement")
    if refined:
        low, high = refined["ci"]
        text += (
            f"; refined answer agrees with {refined['agreement']:.3f} [{low:.3f}, {high:.3f}] "
            f"of its {refined['paths']} paths, n={refined['n']}, "
            f"an answer no path gave: {refined['new_answer']}"
        )
    return text


def _cube_views(
    run_dir: Path, axes: list[str], score: ScoreSource | None = None
) -> tuple[list[Cell], tuple[list[str], list[str], dict[tuple[str, str], Cell]] | None]:
    """Worst cells of the cube over the primary axes, and the department × granularity grid."""
    from medlens.analysis.slices import cross_table, cube, load_slice_table, worst_cells

    if not axes:
        return [], None
    cells = cube(load_slice_table(run_dir, score), axes)
    worst = worst_cells(cells, WORST_K, DEFAULT_MIN_N)
    heatmap = None
    if all(a in axes for a in HEATMAP_AXES):
        heatmap = cross_table(cells, *HEATMAP_AXES)
    return worst, heatmap


def closed_open_cells(results: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(slice label, results.json closed/open cell): overall, then every value of every axis."""
    gap = results.get("closed_open")
    if not gap:
        return []
    cells = [("overall", gap["overall"])]
    for name, entry in (results.get("judges") or {}).items():
        if entry.get("closed_open"):  # the Δ with judged open scores
            cells.append((f"overall, open judged by {name}", entry["closed_open"]))
    for axis, values in (gap.get("by") or {}).items():
        if len(values) > 1:  # one value (lang=en) would repeat the overall row
            cells += [(f"{axis}={value}", cell) for value, cell in values.items()]
    return cells


def closed_open_rows(results: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(slice, closed score (n), open score (n), Δ points) as text, for md and html."""
    rows = []
    for label, cell in closed_open_cells(results):
        delta = cell.get("delta")
        ci = fmt_diff_ci(cell.get("delta_ci"), 100)
        rows.append((
            label,
            f"{percent(cell.get('closed'))} ({cell.get('n_closed', 0)})",
            f"{percent(cell.get('open'))} ({cell.get('n_open', 0)})",
            "–" if delta is None else f"{100 * delta:+.1f} [{ci}], {pairing_text(cell)}",
        ))  # fmt: skip
    from medlens.report.seed_rows import task_mean_rows

    return rows + task_mean_rows(results)


def secondary_text(results: dict[str, Any]) -> str:
    """The secondary per-item metrics in one line (mean, 95% CI, n, chance), or ""."""
    secondary = results.get("secondary") or {}
    if not secondary:
        return ""
    return "Secondary per-item metrics (mean [95% CI], n, chance): " + ", ".join(
        f"{name} {c['score']:.3f} [{c['ci'][0]:.3f}, {c['ci'][1]:.3f}] (n={c['n']}, "
        f"chance {'–' if c.get('random') is None else format(c['random'], '.3f')})"
        for name, c in secondary.items()
    )


def _manual_rows(results: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    from medlens.report.seed_rows import manual_rows

    return manual_rows(results)
