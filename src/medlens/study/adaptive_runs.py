"""Adaptive runs of a study (a model's ``adaptive`` table, :mod:`medlens.study.adaptive_checks`):
each bank checked against its benchmark before anything is written, and the planner each run
hands ``execution.evaluate`` (``run --adaptive`` with the model's bank for that benchmark, its
target and cap, and as baseline the named model's full run of the same benchmark in this study).

They run after the study's full runs (and its sampled runs), so a baseline is finished before
an adaptive run predicts with it; a baseline run that did not finish fails the adaptive run
with the baseline's own refusal. Their rows on the study's boards are estimated ("estimated
from N of M items"), as ``board`` shows any adaptive run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medlens.core.errors import InputError, MedlensError
from medlens.execution.preparation import LoadedBenchmark
from medlens.study.plan import RunJob, StudyPlan, run_key


def check_adaptive_banks(plan: StudyPlan, loaded: Mapping[str, LoadedBenchmark]) -> None:
    """Every adaptive model's bank is readable and a bank of its benchmark's items (one error
    naming the study file, line and key)."""
    from medlens.core.fingerprint import describe
    from medlens.items.adaptive import Predictor
    from medlens.items.bank import read_bank

    study = plan.study
    if (
        any(job.adaptive is not None for job in plan.selected_runs)
        and plan.settings.executor != "local"
    ):
        raise MedlensError(
            "--executor ray: a study's adaptive runs ask their batches on the local executor"
        )
    for job in plan.selected_runs:
        entry = job.adaptive
        bank = None if entry is None else entry.bank_for(job.benchmark)
        if bank is None:
            continue
        model = study.models[job.model]
        where = f"line {model.line}, key models.{job.model}.adaptive.bank"
        benchmark, items = loaded[job.benchmark]
        try:
            Predictor(read_bank(bank), None, ()).check(items, describe(benchmark, items).to_json())
        except MedlensError as exc:
            raise InputError(study.path, where, f"benchmark {job.benchmark!r}: {exc}") from None


def planner_for(job: RunJob) -> Any:
    """The adaptive planner of `job` (None for a run on every item or a sampled run)."""
    entry = job.adaptive
    if entry is None:
        return None
    from medlens.items.adaptive import AdaptiveSettings
    from medlens.items.adaptive_planner import AdaptivePlanner

    options = job.options
    baseline = (
        None if entry.baseline is None else options.out / run_key(entry.baseline, job.benchmark)
    )
    return AdaptivePlanner(AdaptiveSettings(
        bank=entry.bank_for(job.benchmark), baseline=baseline,
        target_halfwidth=entry.target_halfwidth, max_items=entry.max_items, seed=options.seed,
        first_batch=options.concurrency,
    ))  # fmt: skip
