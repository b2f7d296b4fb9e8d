"""A study from start to end: check everything, then run, judge and board under the study's lock.

:func:`prepare_study` does every check that can refuse (the file against study.json, each
benchmark, each run as ``run --dry-run`` checks it, each judge, prices for a budget, another
``medlens study`` on the same folder) and writes nothing; :func:`conduct` then runs the
scheduler and writes the outputs; :func:`dry_run` counts and prices what a run would do.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError, SpecError
from medlens.execution.preparation import LoadedBenchmark
from medlens.study.adaptive_runs import check_adaptive_banks
from medlens.study.board_references import check_board_references
from medlens.study.budget import Projection, StudyCosts, combine
from medlens.study.entries import Study
from medlens.study.jobs import StudyEvents
from medlens.study.outputs import BoardFile, finished_runs, write_boards, write_reports
from medlens.study.plan import StudyPlan, StudySettings, make_plan
from medlens.study.preview import (
    RunPreview,
    check_judges,
    check_meta_files,
    load_benchmarks,
    preview_runs,
)
from medlens.study.record import StudyRecord, check_identity, read_record
from medlens.study.sampling import check_sample_sizes, draw_shared_subsets, sampled_previews
from medlens.study.schedule import Executor, LocalExecutor, Scheduler, StudyOutcome


class StudyLockedError(MedlensError):
    """Another `medlens study` is running the same study."""


@dataclass
class PreparedStudy:
    plan: StudyPlan
    previous: dict[str, Any] | None
    additions: list[str]
    loaded: dict[str, LoadedBenchmark]
    previews: dict[str, RunPreview]
    costs: StudyCosts


@dataclass
class StudyResult:
    outcome: StudyOutcome
    record: StudyRecord
    boards: list[BoardFile] = field(default_factory=list)
    index: tuple[Path, Path] | None = None


def check_settings(settings: StudySettings) -> None:
    from medlens.execution.dispatch import check_order

    if settings.executor not in ("local", "ray"):
        raise SpecError(f"--executor {settings.executor!r}: expected local or ray")
    check_order(settings.order)
    if settings.executor == "ray":
        from medlens.core.extras import require_extra

        require_extra("--executor ray", "ray", ("ray",))
    if settings.budget is not None and not settings.budget >= 0:
        raise SpecError(f"--budget {settings.budget:g}: expected a non-negative number of USD")
    if not 0.0 <= settings.max_error_rate <= 1.0:
        raise SpecError(
            f"--max-error-rate {settings.max_error_rate:g}: expected a rate from 0 to 1"
        )
    if settings.concurrency is not None and settings.concurrency < 1:
        raise SpecError("--concurrency must be at least 1")


def prepare_study(study: Study, settings: StudySettings) -> PreparedStudy:
    """Every check that can refuse the study; writes nothing."""
    from medlens.runs.lock import lock_holder

    check_settings(settings)
    plan = make_plan(study, settings)
    holder = lock_holder(plan.folder) if plan.folder.is_dir() else None
    if holder:
        raise StudyLockedError(f"{plan.folder} is being run by {holder}; wait for it to finish")
    previous = read_record(plan.folder)
    additions = check_identity(plan, previous)
    loaded = load_benchmarks(plan)
    check_sample_sizes(plan, loaded)
    check_adaptive_banks(plan, loaded)
    previews = preview_runs(plan, loaded)
    check_judges(plan)
    check_meta_files(plan)
    check_board_references(plan, loaded, previews)
    costs = StudyCosts(plan, previews)
    costs.check_prices()
    return PreparedStudy(plan, previous, additions, loaded, previews, costs)


def executor_for(prepared: PreparedStudy) -> Executor:
    """Threads of this process, or a connection to the Ray cluster (refused when unreachable)."""
    settings = prepared.plan.settings
    if settings.executor == "ray":
        from medlens.study.ray_jobs import RayExecutor

        return RayExecutor(settings.ray_address, prepared.plan.folder)
    return LocalExecutor(prepared.loaded)


def conduct(prepared: PreparedStudy, events: StudyEvents) -> StudyResult:
    """Run every selected run and judge, then write reports, boards and the index page."""
    from medlens.runs.lock import hold_run_lock

    plan = prepared.plan
    executor = executor_for(prepared)  # before the study folder exists: Ray may be unreachable
    with hold_run_lock(plan.folder, "medlens study", note=events.note):
        record = StudyRecord(plan, prepared.previous)
        record.save()
        outcome = StudyOutcome()
        try:
            _schedule(prepared, plan.only_runs(sampled=False), executor, events, record, outcome)
            if outcome.stop_reason is None and any(job.sample for job in plan.selected_runs):
                _run_sampled(prepared, outcome, executor, events, record)
            if outcome.stop_reason is None and any(job.adaptive for job in plan.selected_runs):
                _schedule(prepared, plan.adaptive_runs(), executor, events, record, outcome)
        finally:
            executor.close()
            stop = outcome.stop_reason
            record.data["stop"] = {"message": stop} if stop else None
            record.data["cost"] = prepared.costs.record()
            record.save()
        result = StudyResult(outcome, record)
        write_outputs(prepared, result)
    return result


def _schedule(
    prepared: PreparedStudy, plan: StudyPlan, executor: Executor, events: StudyEvents,
    record: StudyRecord, outcome: StudyOutcome,
) -> None:  # fmt: skip
    """The runs of `plan` (and their judges) through one scheduler, its outcome merged into
    `outcome` (also when it stops on Ctrl-C or a bug)."""
    scheduler = Scheduler(plan, prepared.previews, executor, prepared.costs, events, record)
    try:
        scheduler.run()
    finally:
        outcome.results.update(scheduler.outcome.results)
        outcome.stop_reason = outcome.stop_reason or scheduler.outcome.stop_reason
        outcome.interrupted = outcome.interrupted or scheduler.outcome.interrupted


def _run_sampled(
    prepared: PreparedStudy, outcome: StudyOutcome, executor: Executor, events: StudyEvents,
    record: StudyRecord,
) -> None:  # fmt: skip
    """After the full runs: banks, shared subsets, then the sampled runs on them."""
    plan = prepared.plan
    sampling = draw_shared_subsets(plan, record.data["runs"], events.note)
    record.data["sampling"] = {**record.data.get("sampling", {}), **sampling.record}
    for key, held in sampling.held.items():
        outcome.results[key] = held
        record.update("runs", key, state=held.state, message=held.message)
    record.save()
    ready = plan.only_runs(sampled=True)
    ready = replace(ready, runs={k: j for k, j in ready.runs.items() if k not in sampling.held})
    if not ready.selected_runs:
        return
    prepared.previews.update(sampled_previews(ready, sampling.loaded))
    if plan.settings.executor == "local":  # the subset, loaded once for every sampled run
        executor = LocalExecutor(sampling.loaded)
    _schedule(prepared, ready, executor, events, record, outcome)


def write_outputs(prepared: PreparedStudy, result: StudyResult) -> None:
    """Reports of finished runs, boards, the matrix and the index page (after every run)."""
    from medlens.study.index import write_index

    plan, data = prepared.plan, result.record.data
    finished = finished_runs(plan, data["runs"])
    render_new = plan.settings.reports and _plots_installed()
    reports = write_reports(plan, finished, render_new=render_new)
    result.boards = write_boards(plan, data["runs"])
    data["boards"] = {b.name: {"files": b.files, "runs": b.runs, "notes": b.notes}
                      for b in result.boards}  # fmt: skip
    result.index = write_index(plan, data, reports, result.boards)
    data["outputs"] = {"index": ["study.md", "study.html"], "reports": reports}
    result.record.save()


def _plots_installed() -> bool:
    """Whether the runs' HTML reports can be drawn; says once why not (the study goes on)."""
    from medlens.core.extras import has_feature

    if has_feature("plots"):
        return True
    global _SAID_NO_PLOTS
    if not _SAID_NO_PLOTS:
        print("note: the runs' report.html are not written (their plots need matplotlib): "
              "pip install 'medlens[plots]'", file=sys.stderr)  # fmt: skip
        _SAID_NO_PLOTS = True
    return False


_SAID_NO_PLOTS = False


@dataclass(frozen=True)
class PlannedJob:
    key: str
    kind: str
    label: str
    """The model (run) or judge label."""
    benchmark: str
    selected: int | None
    to_send: int
    requests: int
    state: str
    projection: Projection
    bound: bool = False
    """`to_send` is an upper bound (judge calls on answers not made yet)."""


def dry_run(prepared: PreparedStudy) -> list[PlannedJob]:
    """What each selected run and judge would send, and its projected cost."""
    from medlens.study.judging import judge_projection, judge_work

    plan, costs = prepared.plan, prepared.costs
    rows = []
    for job in plan.selected_runs:
        preview = prepared.previews[job.key]
        samples = preview.settings.strategy.requests_per_item
        state = "done" if preview.complete else ("new" if preview.selected == len(preview.todo)
                                                 else "partial")  # fmt: skip
        if job.sample and not Path(job.options.bench.argument).is_file():
            state = "after the bank"  # its items: the subset drawn once the full runs finish
        rows.append(PlannedJob(job.key, "run", job.model, job.benchmark, preview.selected,
                               len(preview.todo), len(preview.todo) * samples, state,
                               costs.project_run(job)))  # fmt: skip
        for judge in plan.judges[job.key]:
            work = judge_work(judge, preview.todo)
            rows.append(PlannedJob(judge.key, "judge", judge.judge, job.benchmark, None,
                                   work.calls, work.calls, "", judge_projection(costs, judge,
                                   preview.todo), bound=work.bound))  # fmt: skip
    return rows


def total_projection(rows: list[PlannedJob]) -> tuple[float, float, float, int]:
    return combine(row.projection for row in rows)
