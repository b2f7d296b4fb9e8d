"""The limitations section of a report: the fixed notes that apply to the run (closed or open
answers, region questions) and the ones its results call for (small cells, errors, pending
items, health, sources near their ceiling) (owns what a report says it does not measure)."""

from __future__ import annotations

from typing import Any

from medlens.report.axis_rows import AxisRow
from medlens.stats.cells import DEFAULT_MIN_N

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


def limitations(results: dict[str, Any], axes: dict[str, list[AxisRow]]) -> tuple[str, ...]:
    """Every note of the section: the fixed ones that apply, then the run's own."""
    return _static_limitations(results, axes) + tuple(_dynamic_limitations(results, axes))


def _static_limitations(results: dict[str, Any], axes: dict[str, list[AxisRow]]) -> tuple[str, ...]:
    """The fixed notes, minus those that do not apply (open answers, no region questions)."""
    notes = list(LIMITATIONS)
    if results.get("closed_open"):
        notes[0] = OPEN_LIMITATION
    if not {"box", "mask", "contour"} & {row.value for row in axes.get("granularity", [])}:
        notes.remove(LIMITATIONS[1])
    return tuple(notes)


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
