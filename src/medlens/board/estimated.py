"""Runs made on a designed subset (``medlens items sample``) of the board's benchmark: shown as
unranked rows "estimated from N items" with their full-benchmark estimate and its interval,
beside the runs made on every item (they share no item set to rank them on)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlens.board.align import BoardRun


def designed_source(run: BoardRun) -> str | None:
    """Content hash of the benchmark the run's designed subset was drawn from (None: none)."""
    subset = run.spec.get("subset") or {}
    if not isinstance(subset.get("design"), dict):
        return None
    return (subset.get("source") or {}).get("content_hash")


def split_estimated(runs: Sequence[BoardRun]) -> tuple[list[BoardRun], list[BoardRun]]:
    """(runs ranked on the items, runs on a designed subset of those runs' benchmark); when every
    run is on the subset, they are ranked on it as usual."""
    full = {run.benchmark.get("content_hash") for run in runs}
    estimated = [run for run in runs if designed_source(run) in full]
    ranked = [run for run in runs if run not in estimated]
    return (ranked, estimated) if ranked else (list(runs), [])


def estimated_rows(runs: Sequence[BoardRun]) -> list[dict[str, Any]]:
    """One row per estimated run (``estimate`` None with ``note`` when its bank is missing)."""
    from medlens.items.estimate import recorded_estimate

    rows = []
    for run in runs:
        found = recorded_estimate(run.path, run.spec)
        row: dict[str, Any] = {"run": run.run, "name": run.name}
        if found is None or isinstance(found, str):
            row.update(estimate=None, ci=None, n=None, label="no estimate", note=found)
        else:
            row.update(
                estimate=found.estimate, ci=list(found.ci), n=found.n,
                population_n=found.population_n, extrapolating=found.extrapolating,
                label=f"estimated from {found.n} items", method=found.method_text(),
            )  # fmt: skip
        rows.append(row)
    return rows
