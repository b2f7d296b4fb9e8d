"""The full-benchmark estimate of a run made on a designed subset (``medlens items sample``),
for the report (beside the subset's own score) and the board ("estimated from N items")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def estimate_text(run_dir: Path, spec: Mapping[str, Any]) -> str | None:
    """One line: the estimate, its interval and n; why there is none; None without a design."""
    if not isinstance((spec.get("subset") or {}).get("design"), dict):
        return None  # recorded_estimate's own first test, before importing scipy.optimize for it
    from medlens.items.estimate import recorded_estimate

    found = recorded_estimate(Path(run_dir), spec)
    if found is None:
        return None
    if isinstance(found, str):
        return f"no estimate: {found}"
    lo, hi = found.ci
    text = (
        f"{found.estimate:.3f} [{lo:.3f}, {hi:.3f}] estimated from {found.n} of "
        f"{found.population_n} items ({found.method_text()}); the subset's own score is "
        f"{found.subset_score:.3f}"
    )
    if found.extrapolating:
        text += (
            "; extrapolating (" + "; ".join(found.reasons) + "): the interval stays design-based"
        )
    return text


def estimate_rows(run_dir: Path, spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    text = estimate_text(run_dir, spec)
    return () if text is None else (("full-benchmark estimate", text),)
