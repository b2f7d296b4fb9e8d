"""Checking a plan before anything starts, and counting what each run and judge still has to do.

Each benchmark is loaded once (its selection checked once) for every model that runs on it;
each run then gets the checks ``run --dry-run`` makes (``execution.dry_run.plan_run``: model
backend and options, strategy, probe, a run directory made under another spec) on the loaded
items. Every problem names the study file, the line and the key of the entry to fix, and is
raised before any run, judge or study folder is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from medlens.core.errors import InputError, MedlensError
from medlens.core.items import Item
from medlens.execution.dry_run import RunPlan, plan_run
from medlens.execution.preparation import LoadedBenchmark, load_items
from medlens.execution.requests import RunSettings
from medlens.judges.options import JudgeOptions
from medlens.runs.layout import has_results
from medlens.study.entries import BenchmarkEntry, Study
from medlens.study.plan import RunJob, StudyPlan

T = TypeVar("T")


@dataclass(frozen=True)
class RunPreview:
    """What one run covers and still has to send."""

    key: str
    selected: int
    todo: list[Item]
    settings: RunSettings
    model_spec: str
    complete: bool
    """Nothing left to send and results.json written: the run need not be opened again."""
    notes: tuple[str, ...] = ()
    spec: dict[str, Any] = field(default_factory=dict)
    """The spec the run will record (empty for a sampled run before its subset is drawn)."""


def located(study: Study, line: int, key: str, call: Callable[[], T], run: str = "") -> T:
    """`call()`, a user error in it raised as one naming the study file, line and key."""
    try:
        return call()
    except MedlensError as exc:
        context = f" (run {run})" if run else ""
        raise InputError(study.path, f"line {line}, key {key}{context}", str(exc)) from None


def load_benchmarks(plan: StudyPlan) -> dict[str, LoadedBenchmark]:
    """Each benchmark of the runs to make, loaded once, with its selection checked."""
    from medlens.execution.selection import select_run_items

    study = plan.study
    wanted = {job.benchmark for job in plan.selected_runs}
    loaded: dict[str, LoadedBenchmark] = {}
    for label, entry in study.benchmarks.items():
        if label not in wanted:
            continue
        key = f"benchmarks.{label}"

        def load(entry: BenchmarkEntry = entry) -> LoadedBenchmark:
            benchmark, items = load_items(entry.spec)
            stratify = entry.stratify if entry.sample else None  # else: a design's axes
            select_run_items(benchmark, items, entry.where, entry.sample, stratify,
                             entry.exclude, study.seed)  # fmt: skip
            return benchmark, items

        loaded[label] = located(study, entry.line, key, load)
    return loaded


def preview_runs(plan: StudyPlan, loaded: dict[str, LoadedBenchmark]) -> dict[str, RunPreview]:
    """Every selected run checked as `run --dry-run` checks it; what each has left to send."""
    previews = {}
    study = plan.study
    for job in plan.selected_runs:
        model = study.models[job.model]

        if job.sample is not None and not Path(job.options.bench.argument).is_file():
            previews[job.key] = located(study, model.line, f"models.{job.model}",
                                        partial(provisional_preview, plan, job, loaded),
                                        run=job.key)  # fmt: skip
            continue

        def check(job: RunJob = job) -> RunPlan:
            # a sampled run reads its subset (drawn before this invocation) itself
            return plan_run(job.options, None if job.sample else loaded[job.benchmark],
                            adaptive=job.adaptive is not None)  # fmt: skip

        checked = located(study, model.line, f"models.{job.model}", check, run=job.key)
        complete = not checked.todo and has_results(checked.run_dir)
        previews[job.key] = RunPreview(
            job.key, checked.selected, checked.todo, checked.settings, checked.model_spec,
            complete, checked.notes, checked.spec,
        )  # fmt: skip
    return previews


def provisional_preview(
    plan: StudyPlan, job: RunJob, loaded: dict[str, LoadedBenchmark]
) -> RunPreview:
    """A sampled run before its subset is drawn: its model checked on the full benchmark, and
    N items spread over it standing in for the subset (for --dry-run and the budget)."""
    import asyncio

    from medlens.execution.preparation import prepare

    n = job.sample or 0
    source = plan.study.benchmarks[job.benchmark].spec
    _spec, items, model, settings, _probe = prepare(
        replace(job.options, bench=source), describe_only=True, loaded=loaded[job.benchmark]
    )
    asyncio.run(model.aclose())
    todo = [items[k * len(items) // n] for k in range(n)] if 0 < n < len(items) else items
    note = f"answers the study's design subset of {n} items, drawn once the full runs finished"
    return RunPreview(job.key, len(todo), todo, settings, model.spec, False, (note,))


def check_judges(plan: StudyPlan) -> None:
    """Each judge's options, protocol and backend, before any run starts."""
    from medlens.judges.options import validate
    from medlens.judges.protocols import load_protocol
    from medlens.models import MODELS

    study = plan.study
    checked: set[str] = set()
    for job in (job for jobs in plan.judges.values() for job in jobs):
        if job.judge in checked:
            continue
        checked.add(job.judge)
        entry, key, options = study.judges[job.judge], f"judges.{job.judge}", job.options

        def check_backend(options: JudgeOptions = options) -> None:
            validate(options)
            if options.judge.name != "replay":
                MODELS.get(options.judge.name)

        def check_protocol(options: JudgeOptions = options) -> None:
            load_protocol(options.protocol, options.weights)

        located(study, entry.line, key, check_backend)
        located(study, entry.protocol_line, f"{key}.protocol", check_protocol)


def check_meta_files(plan: StudyPlan) -> None:
    """A board's meta CSV must exist (it is read only at the end, after every run)."""
    for board in plan.study.boards:
        if board.meta is not None and not Path(board.meta).is_file():
            raise InputError(
                plan.study.path, f"line {board.line}, key boards.meta",
                f"{board.meta}: no such file (a CSV with a run column of model labels)",
            )  # fmt: skip
