"""The item audit's summary: flag counts, saturated share, board signal-to-noise, the no-image
share by modality, and what the audit could see with the runs it had (``power``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from medlens.items.audit_null import NullTests
from medlens.items.responses import Responses

FEW = 0.5
"""Below this share of items that could be flagged at all, the report says the runs are too few."""


def power(
    tests: NullTests, tested: list[dict[str, tuple[float, float]]], q: float
) -> dict[str, Any]:
    """How many tests the audit made, the p-value one flag needs (Benjamini–Hochberg's bar for a
    single discovery, q/m) and the share of items whose answers could reach it at all (the
    distractor test's smallest attainable p-value, ``audit_null.attainable``)."""
    m = sum(len(t) for t in tested)
    bar = q / max(m, 1)
    share = float(np.mean(tests.attainable <= bar)) if tests.attainable.size else 0.0
    return {"q": q, "tests": m, "single_flag_p": bar, "attainable_share": round(share, 4)}


def power_text(summary: dict[str, Any]) -> str:
    """One sentence: how many runs, what they let the audit see, what the flags guarantee."""
    found = summary["power"]
    runs, share = summary["models"], found["attainable_share"]
    head = "Too few runs to audit most items: " if share < FEW else ""
    return (
        f"{head}{runs} runs: a wrong key or an option the abler runs share can be flagged on {share:.0%} of the items "
        f"(those whose answers could reach p ≤ {found['single_flag_p']:.2g}, what one flag needs "
        f"at q {found['q']:g} over {found['tests']} tests). Flags carry a false-discovery rate "
        f"≤ {found['q']:g} against the item model's own null; an item not flagged is not shown "
        "sound."
    )


def audit_summary(
    responses: Responses, rows: list[dict[str, Any]], probed: bool, seen: dict[str, Any]
) -> dict[str, Any]:
    """Per benchmark: flag counts, saturated share, board signal-to-noise, no-image share by
    modality, the number of runs and the audit's power (`seen`, from :func:`power`)."""
    from medlens.items.audit import FLAGS
    from medlens.stats.intervals import wilson

    counts = {name: sum(name in row["flags"] for row in rows) for name in FLAGS}
    observed = responses.observed
    right = np.nansum(responses.scores, axis=1)
    n = observed.sum(axis=1)
    lo, hi = wilson(right, n)
    half = float(np.mean((hi - lo) / 2))
    scores = right / np.maximum(n, 1)
    summary: dict[str, Any] = {
        "n_items": len(rows),
        "flag_counts": counts,
        "n_flagged": sum(row["flagged"] for row in rows),
        "saturated_share": round(counts["saturated"] / max(len(rows), 1), 4),
        "signal_to_noise": round(float(np.std(scores, ddof=1)) / half, 3)
        if half > 0 and len(scores) > 1
        else None,
        "signal_to_noise_note": "spread (sd) of the runs' scores over their mean 95% half-width",
        "models": len(responses.runs),
        "power": seen,
    }
    summary["power_note"] = power_text(summary)
    if probed:
        by: dict[str, list[bool]] = {}
        for row in rows:
            if row["no_image_share"] is not None:
                by.setdefault(row["modality"] or "(none)", []).append(
                    "solved_without_image" in row["flags"]
                )
        summary["solved_without_image_share"] = {
            m: {"share": round(sum(v) / len(v), 4), "n": len(v)} for m, v in sorted(by.items())
        }
    return summary
