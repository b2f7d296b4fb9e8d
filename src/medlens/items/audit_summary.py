"""The item audit's summary: flag counts, saturated share, board signal-to-noise, the no-image
share by modality, and what the audit could see with the runs it had (``power``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from medlens.items.responses import Responses

FEW = 0.5
"""Below this share of wrong keys found, the report says the runs are too few."""


def power(
    tested: list[dict[str, tuple[float, float]]], q: float, wrong_key: Callable[[float], float]
) -> dict[str, Any]:
    """How many other-option tests (the ``key`` and ``ambiguous`` flags) the audit made, the
    p-value a flag needed (Benjamini–Hochberg's bar q·max(R, 1)/m at its R flags of that kind)
    and how often a wrong key on one of the benchmark's items clears it (`wrong_key`, given
    the bar: ``audit_power.wrong_key_power``)."""
    option = [t.get("key") or t.get("ambiguous") for t in tested]
    m = sum(found is not None for found in option)
    flags = sum(found is not None and found[1] <= q for found in option)
    bar = q * max(flags, 1) / max(m, 1)
    return {"q": q, "tests": m, "flag_p": bar, "wrong_key_power": round(wrong_key(bar), 3)}


def power_text(summary: dict[str, Any]) -> str:
    """One sentence: how many runs, what they let the audit see, what the flags guarantee."""
    found = summary["power"]
    runs, seen = summary["models"], found["wrong_key_power"]
    head = "Too few runs to find most wrong keys: " if seen < FEW else ""
    return (
        f"{head}{runs} runs: a wrong key on one of these items would be flagged about "
        f"{seen:.0%} of the time (it needs p ≤ {found['flag_p']:.2g}, Benjamini–Hochberg at q "
        f"{found['q']:g} over {found['tests']} tests). Each kind of flag carries a "
        f"false-discovery rate ≤ {found['q']:g} against the item model's own null; an item not "
        "flagged is not shown sound."
    )


def audit_summary(
    responses: Responses, rows: list[dict[str, Any]], probed: bool, seen: dict[str, Any],
    flags: Sequence[str],
) -> dict[str, Any]:  # fmt: skip
    """Per benchmark: flag counts, saturated share, board signal-to-noise, no-image share by
    modality, the number of runs and the audit's power (`seen`, from :func:`power`)."""
    from medlens.stats.intervals import wilson

    counts = {name: sum(name in row["flags"] for row in rows) for name in flags}
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
