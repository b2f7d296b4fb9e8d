"""The VAL/TEST gap of one model: two runs of the same model on two splits of one benchmark.

The splits hold different items, so the gap is unpaired: each run's overall score and its 95% CI
(the interval every score gets), the gap A − B, and a normal interval from the two standard
errors read off those CIs (half-width / 1.96; independent samples). A gap beyond
:data:`GAP_ALERT` (2 points: the seeds' "2–3 points") is called out: the splits may differ in
difficulty or mix, or the model may have seen one of them; either way a score on one split does
not stand for the other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

GAP_ALERT = 0.02
Z95 = 1.959963984540054


def is_split_pair(run_a: Mapping[str, Any], run_b: Mapping[str, Any]) -> bool:
    """Same model on two different splits of the same benchmark (by loader name)."""
    spec_a, spec_b = run_a["spec"], run_b["spec"]
    bench_a, bench_b = spec_a["benchmark"], spec_b["benchmark"]
    return (
        spec_a.get("model") == spec_b.get("model")
        and bench_a.get("name") == bench_b.get("name")
        and bench_a.get("split") != bench_b.get("split")
    )


def split_gap(run_a: Path, run_b: Path) -> dict[str, Any]:
    """Both runs' overall scores, the gap A − B with its interval, and the call-out."""
    from medlens.analysis.artifacts import fresh_results

    cells = [fresh_results(run)["overall"] for run in (run_a, run_b)]
    splits = [_split(run) for run in (run_a, run_b)]
    out: dict[str, Any] = {
        "runs": [str(run_a), str(run_b)], "splits": splits,
        "scores": [c.get("score") for c in cells], "n": [c.get("n") for c in cells],
        "cis": [c.get("ci") for c in cells], "gap": None, "ci": None, "alert": None,
    }  # fmt: skip
    found = unpaired_gap(cells[0], cells[1])
    if found is None:
        return out
    out.update(gap=found[0], ci=found[1], alert=gap_alert(splits, found[0]))
    return out


def unpaired_gap(
    a: Mapping[str, Any], b: Mapping[str, Any], score_key: str = "score"
) -> tuple[float, list[float]] | None:
    """A − B of two independent cells (score, ci) with a normal interval; None without both."""
    if any(c.get(score_key) is None or not c.get("ci") for c in (a, b)):
        return None
    gap = float(a[score_key]) - float(b[score_key])
    se = math.sqrt(sum(((c["ci"][1] - c["ci"][0]) / (2 * Z95)) ** 2 for c in (a, b)))
    return gap, [gap - Z95 * se, gap + Z95 * se]


def gap_alert(splits: list[str], gap: float) -> str | None:
    """The call-out of a gap beyond GAP_ALERT between one model's two splits, else None."""
    if abs(gap) <= GAP_ALERT:
        return None
    return (
        f"{splits[0]}/{splits[1]} gap of {100 * abs(gap):.1f} points between two runs of one "
        f"model is beyond {100 * GAP_ALERT:.0f} points: the splits differ in difficulty or "
        "mix, or the model may have seen one; a score on one split does not stand for the other"
    )


def split_gap_lines(result: Mapping[str, Any]) -> list[str]:
    """What compare prints for a split pair."""
    lines = [
        f"{run} ({split}): {_pct(score)} [{_ci(ci)}] (n={n})"
        for run, split, score, ci, n in zip(result["runs"], result["splits"], result["scores"],
                                            result["cis"], result["n"], strict=True)
    ]  # fmt: skip
    if result["gap"] is None:
        return [*lines, "gap: – (a run has no scored items)"]
    low, high = result["ci"]
    lines.append(
        f"gap {result['splits'][0]} − {result['splits'][1]}: {100 * result['gap']:+.1f} points "
        f"[{100 * low:+.1f}, {100 * high:+.1f}] (different items: an unpaired interval)"
    )
    return lines + ([f"warning: {result['alert']}"] if result["alert"] else [])


def _split(run: Path) -> str:
    from medlens.runs.view import RunView

    return str(RunView(run).spec["benchmark"].get("split"))


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _ci(ci: list[float] | None) -> str:
    return "–" if not ci else f"{100 * ci[0]:.1f}, {100 * ci[1]:.1f}"
