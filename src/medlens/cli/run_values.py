"""`medlens run`'s flags and config values, checked and parsed once: one benchmark and one model,
the adaptive planner (``--adaptive``/``--baseline``) and the :class:`RunOptions` (owns how the
command's values become a run's options; ``run`` is the command, ``run_progress`` runs it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from medlens.execution.evaluate import RunOptions

ADAPTIVE_ONLY = ("target_halfwidth", "max_items")


def adaptive_planner(values: dict[str, Any]) -> Any:
    """The planner of an adaptive run (``--adaptive``/``--baseline``), or None; its options are
    taken out of `values` (``--stratify`` names its groups instead of a sample's strata)."""
    from medlens.core.errors import SpecError

    bank, baseline = values.pop("adaptive", None), values.pop("baseline", None)
    extra = {key: values.pop(key, None) for key in ADAPTIVE_ONLY}
    if bank is None and baseline is None:
        for key, value in extra.items():
            if value is not None:
                raise SpecError(f"--{key.replace('_', '-')}: only with --adaptive BANK.json or "
                                "--baseline RUN")  # fmt: skip
        return None
    if extra["target_halfwidth"] is None:
        raise SpecError(
            "--target-halfwidth: an adaptive run needs the half-width to stop at, e.g. 0.02"
        )
    # --stratify names the groups (with --sample the run itself refuses the adaptive run)
    stratify = values.pop("stratify", None) if values.get("sample") is None else None
    from medlens.execution.selection import parse_stratify
    from medlens.items.adaptive import AdaptiveSettings
    from medlens.items.adaptive_planner import AdaptivePlanner

    settings = AdaptiveSettings(
        bank=None if bank is None else Path(bank), baseline=None if baseline is None else Path(baseline),
        target_halfwidth=float(extra["target_halfwidth"]), max_items=extra["max_items"],
        stratify=parse_stratify(stratify), seed=int(values.get("seed") or 0),
        first_batch=int(values.get("concurrency") or 8),
    )  # fmt: skip
    return AdaptivePlanner(settings)


def single_specs(values: dict[str, Any]) -> dict[str, Any]:
    """`run` is one model on one benchmark: a repeated ``--model`` or ``--bench`` is refused (typer
    would keep the last one silently) and points at ``medlens study``."""
    from medlens.core.errors import SpecError

    for key in ("bench", "model"):
        given = values.get(key) or []
        if len(given) > 1:
            raise SpecError(
                f"--{key} given {len(given)} times ({', '.join(given)}): `run` evaluates one model "
                "on one benchmark; for several, write a study file and run `medlens study "
                "STUDY.toml` (docs/studies.md)"
            )
        values[key] = given[0] if given else None
    return values


def run_options(values: Mapping[str, Any]) -> RunOptions:
    """RunOptions from the merged flags and config values (one key per RunOptions field); the
    benchmark, model and exemplar specs and the strategy are parsed here, once."""
    from dataclasses import fields

    from medlens.core.errors import SpecError
    from medlens.execution.evaluate import RunOptions

    for required in ("bench", "model"):
        if not values.get(required):
            raise SpecError(f"--{required} is required (on the command line or in --config)")
    rate = float(values["max_error_rate"])
    if not 0.0 <= rate <= 1.0:
        raise SpecError(f"--max-error-rate {rate:g}: expected a rate from 0 to 1")
    retry = values.get("max_retry_rate")
    if retry is not None and not 0.0 <= float(retry) < 1.0:
        raise SpecError(f"--max-retry-rate {float(retry):g}: expected a rate from 0 to below 1")
    from medlens.api import parsed_run_values

    names = {f.name for f in fields(RunOptions)}
    return RunOptions(**parsed_run_values({k: v for k, v in values.items() if k in names}))
