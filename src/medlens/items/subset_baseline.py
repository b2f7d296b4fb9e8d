"""``estimate RUN --bank BANK --baseline OLD`` for a run on a designed subset: the estimate with
``baseline_score``, ``delta`` and ``delta_ci`` (the interval shifted by the baseline's exactly
known full-benchmark score; :func:`medlens.items.baseline.delta_json`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.items.baseline import check_same_items, delta_json, read_baseline
from medlens.items.estimate import Estimate
from medlens.items.responses import run_spec


@dataclass(frozen=True)
class ComparedEstimate:
    """An estimate and its comparison with a baseline run (reads like the estimate)."""

    found: Estimate
    comparison: dict[str, Any]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.found, name)

    def to_json(self) -> dict[str, Any]:
        return {**self.found.to_json(), **self.comparison}


def with_baseline(found: Estimate, run: Path, baseline: Path, ids: list[str]) -> ComparedEstimate:
    """`found` (of the run at `run`) compared with the full run `baseline` on the subset's
    source benchmark (`ids`: its items, the bank's)."""
    other = read_baseline(baseline)
    source = (run_spec(run).get("subset") or {}).get("source") or {}
    check_same_items(other, str(source.get("content_hash") or ""), ids,
                     f"the benchmark {run}'s subset was drawn from")  # fmt: skip
    return ComparedEstimate(found, delta_json(found.estimate, found.ci, other))
