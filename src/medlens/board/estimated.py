"""Runs made on a designed subset (``medlens items sample``) of the board's benchmark, and
adaptive runs (``run --adaptive``) on it: shown as unranked rows "estimated from N items" ("… of
M items" for an adaptive run) with their full-benchmark estimate and its interval, beside the
runs made on every item (they share no item set to rank them on)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlens.board.align import BoardRun


def designed_source(run: BoardRun) -> str | None:
    """Content hash of the benchmark the run's designed subset was drawn from, or an adaptive
    run asked its items from (None: neither)."""
    if is_adaptive(run):
        return run.benchmark.get("content_hash")
    subset = run.spec.get("subset") or {}
    if not isinstance(subset.get("design"), dict):
        return None
    return (subset.get("source") or {}).get("content_hash")


def is_adaptive(run: BoardRun) -> bool:
    return isinstance(run.spec.get("adaptive"), dict)


def split_estimated(runs: Sequence[BoardRun]) -> tuple[list[BoardRun], list[BoardRun]]:
    """(runs ranked on the items, estimated runs of those runs' benchmark); when every run is on
    a designed subset, they are ranked on it as usual. Adaptive runs are never ranked: each asked
    other items."""
    full = {run.benchmark.get("content_hash") for run in runs if not is_adaptive(run)}
    estimated = [run for run in runs if is_adaptive(run) or designed_source(run) in full]
    ranked = [run for run in runs if run not in estimated]
    if ranked or any(is_adaptive(run) for run in runs):
        return ranked, estimated
    return list(runs), []


def estimated_rows(runs: Sequence[BoardRun]) -> list[dict[str, Any]]:
    """One row per estimated run (``estimate`` None with ``note`` when its bank is missing)."""
    from medlens.items.estimates import recorded_any

    rows = []
    for run in runs:
        found = recorded_any(run.path, run.spec)
        row: dict[str, Any] = {"run": run.run, "name": run.name}
        if found is None or isinstance(found, str):
            row.update(estimate=None, ci=None, n=None, label="no estimate", note=found)
        else:
            row.update(
                estimate=found.estimate, ci=list(found.ci), n=found.n,
                population_n=found.population_n, extrapolating=found.extrapolating,
                label=f"estimated from {found.n}{_of(run, found)} items",
                method=found.method_text(),
            )  # fmt: skip
        rows.append(row)
    return rows


def _of(run: BoardRun, found: Any) -> str:
    """ " of M" for an adaptive run: how many of the benchmark's items it asked."""
    return f" of {found.population_n}" if is_adaptive(run) else ""
