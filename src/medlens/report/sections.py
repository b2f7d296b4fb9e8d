"""The content of the full reports (markdown, HTML, xlsx), computed once from a run directory.

Each renderer lays out the same sections: protocol; overall score vs random baseline; per-axis
tables; the worst cells; the deficiency profile; extraction sensitivity; limitations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.slices import MAX_AXES, Cell
from medlens.execution.selection import provenance_rows
from medlens.report.diff_text import fmt_diff_ci
from medlens.report.source_label import score_rows
from medlens.scoring.closed_open import pairing_text
from medlens.stats.cells import DEFAULT_MIN_N, is_small

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

PRIMARY_AXES = ("granularity", "department", "task", "modality")
"""The GMAI-MMBench lexical-tree axes, in the order the report shows them."""
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


LIMITATIONS = (
    "Scores are multiple-choice (or closed-answer) accuracy. They do not measure free-text "
    "answers, report writing, localisation (regions are drawn for the model, not found by it), "
    "calibration or clinical safety.",
    "Box, mask and contour questions mark the region on the image: they test recognition of a "
    "marked region, not detection.",
    "Items come from public datasets; the model may have seen images or questions in training. "
    "This report contains no contamination audit.",
    "The random baseline is the expected score of uniform guessing; answer-position bias is not "
    "measured here (compare with a `--model prior` run).",
    "One run, one prompt style and one seed: variation over prompts and sampling is not shown.",
)
OPEN_LIMITATION = (
    "Open answers are scored by rules: exact match after normalisation, or the gold answer "
    "inside a sentence frame (token F1, token recall and BLEU-1 are secondary); a correct "
    "paraphrase counts as wrong unless a judge scores it (medlens judge). Localisation, report "
    "writing, calibration and clinical safety are not measured."
)


@dataclass(frozen=True)
class AxisRow:
    """One value of one axis, as in results.json ``by``."""

    value: str
    n: int
    score: float | None
    ci: tuple[float, float] | None
    random: float | None
    vlmeval: float | None
    unparsed: float
    refused: float
    error: float
    images: int = 0
    coverage: str = ""
    """Under a judged score source: ``verdicts/scope`` of the cell ("" otherwise)."""
    imageless: bool = False
    """The run has no images (its clusters are single items): the images column shows "–"."""

    effective_images: float | None = None
    """Kish's effective number of images, when the results hold it (it decides `small`)."""

    @property
    def small(self) -> bool:
        return is_small(
            self.n, self.images if self.effective_images is None else self.effective_images
        )

    @property
    def images_shown(self) -> str:
        return "–" if self.imageless else str(self.images)


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
    axes = _axis_rows(results)
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
        limitations=_static_limitations(results, axes) + tuple(_dynamic_limitations(results, axes)),
    )


def worst_cell_axes(axes: dict[str, list[AxisRow]]) -> list[str]:
    """The axes the worst cells are ranked over: GMAI's primary axes the run has, then the
    benchmark's own fields (SLAKE's content_type and location, PathVQA's question_type: the
    tabulated ones, so never id-like or near-unique), then answer_type; at most MAX_AXES."""
    from medlens.core.items import CANONICAL_AXES

    primary = [a for a in PRIMARY_AXES if a in axes]
    own = [a for a in axes if a not in CANONICAL_AXES and a != "kind" and len(axes[a]) >= 2]
    closed_open = ["answer_type"] if len(axes.get("answer_type", ())) >= 2 else []
    return (primary + own + closed_open)[:MAX_AXES]


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


def _axis_rows(results: dict[str, Any]) -> dict[str, list[AxisRow]]:
    by: dict[str, dict[str, dict[str, Any]]] = results.get("by") or {}
    order = [a for a in PRIMARY_AXES if a in by] + [a for a in by if a not in PRIMARY_AXES]
    out: dict[str, list[AxisRow]] = {}
    for axis in order:
        if len(by[axis]) < 2 and axis not in PRIMARY_AXES:
            continue
        imageless = (results.get("counts") or {}).get("items_with_images") == 0
        out[axis] = [_axis_row(value, cell, imageless) for value, cell in by[axis].items()]
    return out


def _axis_row(value: str, cell: dict[str, Any], imageless: bool = False) -> AxisRow:
    ci = cell.get("ci")
    return AxisRow(
        value=value,
        n=int(cell["n"]),
        score=cell.get("score"),
        ci=(float(ci[0]), float(ci[1])) if ci else None,
        random=cell.get("random"),
        vlmeval=cell.get("vlmeval_score"),
        unparsed=float(cell.get("unparsed", 0.0)),
        refused=float(cell.get("refused", 0.0)),
        error=float(cell.get("error", 0.0)),
        images=int(cell.get("images", cell["n"])),
        coverage=coverage_cell(cell),
        effective_images=cell.get("effective_images"),
        imageless=imageless,
    )


def coverage_cell(cell: dict[str, Any]) -> str:
    """``38/40`` for a judged cell (items with a verdict / items of the judge's scope)."""
    cover = cell.get("coverage")
    return f"{cover['verdicts']}/{cover['scope']}" if cover else ""


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


def deficiency_rows(
    results: dict[str, Any], axes: dict[str, list[AxisRow]]
) -> tuple[tuple[str, str], ...]:
    """Unparsed, refusal, empty and error rates, and the box − image score gap."""
    rates = results["rates"]
    rows = [
        ("unparsed rate", percent(rates.get("unparsed"))),
        ("refusal rate", percent(rates.get("refused"))),
        ("empty-answer rate", percent(rates.get("empty"))),
        ("error rate (no answer from the model)", percent(rates.get("error"))),
    ]
    decided = results.get("counts", {}).get("vocabulary")
    if decided:
        rows.append(("decided by a vocabulary entry", f"{decided} items (medlens reading vocab)"))
    levels = {row.value: row for row in axes.get("granularity", [])}
    box, image = levels.get("box"), levels.get("image")
    gap = results.get("box_image_gap")
    if gap:
        rows.append(
            (
                "box-level − image-level score",
                f"{100 * gap['difference']:+.1f} points, 95% CI {fmt_diff_ci(gap['ci'], 100)} "
                f"(box n={gap['n_box']}, image n={gap['n_image']})",
            )
        )
    else:
        why = "no scores" if box and image else "needs both granularities"
        rows.append(("box-level − image-level score", f"– ({why})"))
    suspects = results.get("leakage_suspects")
    if suspects is not None:
        probe = results["spec"]["probe"]
        rows.append((f"leakage suspects under probe {probe}", suspect_summary(suspects)))
    return tuple(rows)


def suspect_summary(suspects: list[dict[str, Any]]) -> str:
    """Slices whose score under an evidence-removing probe is above chance (Holm-adjusted)."""
    if not suspects:
        return (
            "none: no slice scores significantly above chance without its evidence "
            "(one-sided test per slice, Holm-adjusted; slices with n < 50 or < 10 images untested)"
        )
    return "; ".join(
        f"{'overall' if s['axis'] == 'overall' else s['axis'] + '=' + s['value']} "
        f"{percent(s['score'])} (CI {percent_ci(s['ci'])}, chance {percent(s['random'])}, "
        f"n={s['n']}, images={s.get('images', s['n'])}, adj. p {s.get('p_adjusted', 0):.2g})"
        for s in suspects
    )


def _static_limitations(results: dict[str, Any], axes: dict[str, list[AxisRow]]) -> tuple[str, ...]:
    """The fixed notes, minus those that do not apply (open answers, no region questions)."""
    notes = list(LIMITATIONS)
    if results.get("closed_open"):
        notes[0] = OPEN_LIMITATION
    if not {"box", "mask", "contour"} & {row.value for row in axes.get("granularity", [])}:
        notes.remove(LIMITATIONS[1])
    return tuple(notes)


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


def _dynamic_limitations(results: dict[str, Any], axes: dict[str, list[AxisRow]]) -> list[str]:
    notes = []
    small = sum(1 for rows in axes.values() for row in rows if row.small)
    if small and results["has_answers"]:  # without gold every cell has n = 0
        notes.append(
            f"{small} per-axis cells have n < {DEFAULT_MIN_N} or fewer than 10 images: their "
            "CIs are wide and they are never ranked among the worst cells."
        )
    counts = results["counts"]
    if counts["errors"]:
        notes.append(
            f"{counts['errors']} items errored (no answer from the model) and are left "
            "out of every score; their rate is in the deficiency profile."
        )
    if counts["pending"] and results["spec"].get("adaptive"):
        notes.append(f"{counts['pending']} items were not asked: an adaptive run asks only what "
                     "its interval needs; the full-benchmark estimate is in the summary.")  # fmt: skip
    elif counts["pending"]:
        notes.append(f"{counts['pending']} items have not been run yet.")
    from medlens.checks.contamination import near_ceiling, reads_gold
    from medlens.runs.health import health_lines

    notes.extend(f"{line}." for line in health_lines(results.get("health")))
    if not reads_gold(str(results["spec"].get("model", ""))):
        sources = (results.get("by") or {}).get("source", {})
        notes.extend(f"{line}." for line in near_ceiling(sources))
    return notes


def percent(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def percent_ci(ci: tuple[float, float] | list[float] | None) -> str:
    return "–" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def images_text(results: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """A cell's image count; "–" for a run without images (its clusters are single items)."""
    if results.get("counts", {}).get("items_with_images") == 0:
        return "–"
    return str(cell.get("images", "–"))


def _manual_rows(results: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    from medlens.report.seed_rows import manual_rows

    return manual_rows(results)
