"""The estimate of an estimated run, whichever kind: an adaptive run (``run --adaptive``) or a
run on a designed subset (``items sample``); with a baseline, its comparison with that full run.
What ``estimate`` and ``gate`` call."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.items.adaptive_estimate import estimate_adaptive_run, is_adaptive
from medlens.items.responses import run_spec


def estimate_of(run: Path, bank: Path | None, by: str | None, baseline: Path | None) -> Any:
    """An :class:`~medlens.items.adaptive_estimate.AdaptiveEstimate` or an
    :class:`~medlens.items.estimate.Estimate` (compared with `baseline` when given); a subset
    run's bank defaults to the one its design recorded."""
    spec = run_spec(run)
    if is_adaptive(spec):
        if by is not None:
            raise MedlensError(
                f"--by {by}: an adaptive run's design targets the whole benchmark's score; "
                "estimates by axis need a run on a designed subset (items sample --stratify)"
            )
        return estimate_adaptive_run(run, bank, baseline)
    from medlens.items.bank import read_bank
    from medlens.items.estimate import estimate_run
    from medlens.items.subset_baseline import with_baseline

    bank = bank or _recorded_bank(run, spec)
    found = estimate_run(run, bank, by)
    return found if baseline is None else with_baseline(found, run, baseline, read_bank(bank).ids)


def _recorded_bank(run: Path, spec: dict[str, Any]) -> Path:
    layout = (spec.get("subset") or {}).get("design")
    if not isinstance(layout, dict):
        raise MedlensError(
            f"{run}: not an estimated run (neither adaptive nor on a subset drawn by "
            "`medlens items sample`)"
        )
    recorded = Path(str((layout.get("bank") or {}).get("path", "")))
    if not recorded.is_file():
        raise MedlensError(
            f"--bank: {run}'s design names the bank {recorded}, which is gone; give --bank BANK.json"
        )
    return recorded


def recorded_any(path: Path, spec: Mapping[str, Any]) -> Any:
    """For report and board: the estimate of an adaptive run or of a run on a designed subset,
    from what its run.json records (None: neither; a string: why there is no estimate)."""
    if not is_adaptive(spec):
        from medlens.items.estimate import recorded_estimate

        return recorded_estimate(path, spec)
    try:
        return estimate_adaptive_run(path)
    except MedlensError as exc:
        return str(exc)
