"""The deficiency profile of a report: unparsed, refusal, empty and error rates, answers decided
by a vocabulary entry, the box − image score gap and leakage suspects under a probe (owns how a
run's failure modes are summed up beside its score)."""

from __future__ import annotations

from typing import Any

from medlens.report.axis_rows import AxisRow
from medlens.report.diff_text import fmt_diff_ci
from medlens.report.percent_text import percent, percent_ci


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
