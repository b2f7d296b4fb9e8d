"""``medlens gate RUN --baseline OLD --max-drop D``: is a new checkpoint no more than D below
the last one? The line a CI pipeline puts after training.

The difference is RUN − OLD on the full benchmark with its 95% interval: for an adaptive run
or a run on a designed subset, the estimate's interval shifted by OLD's exactly known score
(``estimate --baseline``); for a full run, the paired interval over the shared items that
``medlens compare`` prints. Verdicts: **pass** (exit 0) when the interval's lower end is at or
above −D (shown no more than D below), **fail** (exit 1) when its upper end is below −D (shown
worse by more than D), **inconclusive** (exit 3) when the interval straddles −D (ask more
items: rerun the adaptive run with a smaller ``--target-halfwidth``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.items.baseline import check_same_items, estimated_kind, read_baseline
from medlens.items.responses import run_spec

EXIT_CODES = {"pass": 0, "fail": 1, "inconclusive": 3}


@dataclass(frozen=True)
class GateDecision:
    """A gate's verdict and the figures it rests on."""

    verdict: str
    score: float
    baseline_score: float
    delta: float
    delta_ci: tuple[float, float]
    max_drop: float
    n: int
    population_n: int
    how: str
    """How the score and the interval were made, in words."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def message(self, run: Path, baseline: Path) -> str:
        lo, hi = self.delta_ci
        verdicts = {
            "pass": f"shown no more than {self.max_drop:.1%} below",
            "fail": f"shown worse by more than {self.max_drop:.1%}",
            "inconclusive": f"the interval straddles −{self.max_drop:.1%}; ask more items",
        }
        return (
            f"gate {self.verdict}: {run} {self.score:.1%} vs {baseline} {self.baseline_score:.1%}: "
            f"Δ {self.delta:+.1%} [{lo:+.1%}, {hi:+.1%}] (95%, {self.how}); "
            f"{verdicts[self.verdict]}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "score": round(self.score, 6),
            "baseline_score": round(self.baseline_score, 6),
            "delta": round(self.delta, 6),
            "delta_ci": [round(self.delta_ci[0], 6), round(self.delta_ci[1], 6)],
            "max_drop": self.max_drop,
            "n": self.n,
            "population_n": self.population_n,
            "method": self.how,
        }


def verdict(delta_ci: tuple[float, float], max_drop: float) -> str:
    lo, hi = delta_ci
    if lo >= -max_drop:
        return "pass"
    if hi < -max_drop:
        return "fail"
    return "inconclusive"


def gate(run: Path, baseline: Path, max_drop: float, bank: Path | None = None) -> GateDecision:
    """The gate's decision on `run` against the full run `baseline`."""
    if not 0 <= max_drop < 1:
        raise SpecError(
            f"--max-drop {max_drop:g}: expected a drop from 0 to below 1 (0.02 = 2 points)"
        )
    spec = run_spec(run)
    kind = estimated_kind(spec)
    if kind is None:
        return _full_gate(run, baseline, max_drop)
    from medlens.items.estimates import estimate_of

    found = estimate_of(run, bank, None, baseline)
    comparison = found.comparison
    ci = (float(comparison["delta_ci"][0]), float(comparison["delta_ci"][1]))
    return GateDecision(
        verdict=verdict(ci, max_drop), score=found.estimate,
        baseline_score=float(comparison["baseline_score"]), delta=float(comparison["delta"]),
        delta_ci=ci, max_drop=max_drop, n=found.n, population_n=found.population_n,
        how=f"estimated from {found.n} of {found.population_n} items asked",
    )  # fmt: skip


def _full_gate(run: Path, baseline: Path, max_drop: float) -> GateDecision:
    """A full run against the baseline: compare's paired interval over their items."""
    from medlens.analysis.compare import compare_runs

    old = read_baseline(baseline)
    new = read_baseline(run, "RUN")
    check_same_items(old, new.content_hash, list(new.scores), str(run))
    cell = compare_runs(baseline, run).overall
    ci = (float(cell.ci[0]), float(cell.ci[1]))
    return GateDecision(
        verdict=verdict(ci, max_drop), score=cell.score_b, baseline_score=cell.score_a,
        delta=cell.difference, delta_ci=ci, max_drop=max_drop, n=cell.n, population_n=cell.n,
        how=f"paired over all {cell.n} items, as compare",
    )  # fmt: skip
