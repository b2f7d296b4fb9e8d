"""The full-benchmark estimate of a run made on a designed subset (``medlens items sample``) or
of an adaptive run (``run --adaptive``), for the report (beside the subset's own score) and the board ("estimated from N items")."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any


def estimate_text(run_dir: Path, spec: Mapping[str, Any]) -> str | None:
    """One line: the estimate, its interval and n; why there is none; None without a design."""
    adaptive = isinstance(spec.get("adaptive"), dict)
    if not adaptive and not isinstance((spec.get("subset") or {}).get("design"), dict):
        return None  # recorded_any's own first test, before importing scipy.optimize for it
    from medlens.items.estimates import recorded_any

    found = recorded_any(Path(run_dir), spec)
    if found is None:
        return None
    if isinstance(found, str):
        return f"no estimate: {found}"
    lo, hi = found.ci
    own = "asked items'" if adaptive else "subset's"
    text = (
        f"{found.estimate:.3f} [{lo:.3f}, {hi:.3f}] estimated from {found.n} of "
        f"{found.population_n} items ({found.method_text()}); the "
        f"{own} own score is {found.subset_score:.3f}"
    )
    if found.extrapolating:
        text += (
            "; extrapolating (" + "; ".join(found.reasons) + "): the interval stays design-based"
        )
    return text


def estimate_rows(run_dir: Path, spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    text = estimate_text(run_dir, spec)
    return () if text is None else (("full-benchmark estimate", text),)
