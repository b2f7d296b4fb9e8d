"""One job of a study, done where an executor puts it: a run through ``execution.evaluate``, a
judge stage through ``judges.stage.judge_run``, both with results.json derived as the CLI does.

The job reports through :class:`JobHooks`; a hook stops the job by raising (the run and judge
stages store the line that was answered first, so a rerun resumes after it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from medlens.core.errors import MedlensError, StopAfterInFlight, StorageError
from medlens.execution.preparation import LoadedBenchmark
from medlens.study.plan import Job, JudgeJob, RunJob

FINISHED_STATES = ("done", "errors")
"""A run or judge in these states has a record (or judgement) for everything it covers."""


class StudyStopped(StopAfterInFlight):
    """The study is stopping (Ctrl-C, the budget, another job's failure): this job stops too,
    after storing the answers it had in flight (they are paid for)."""


@dataclass(frozen=True)
class JobResult:
    state: str
    """``done``, ``errors`` (finished, some items errored), ``failed`` (a user error stopped
    it), ``stopped`` (the study stopped it; resumable) or ``skipped`` (its run did not finish)."""
    summary: dict[str, Any] = field(default_factory=dict)
    message: str = ""


class StudyEvents(Protocol):
    """What a display (the CLI's progress lines) hears; called from worker threads too."""

    def job_started(self, job: Job, total: int | None, done: int) -> None: ...

    def job_advanced(self, job: Job) -> None: ...

    def job_finished(self, job: Job, result: JobResult) -> None: ...

    def note(self, message: str) -> None: ...


class StopSignal(Protocol):
    """Set when the study stops: a :class:`threading.Event`, or a Ray task's stop file."""

    def is_set(self) -> bool: ...


class LineSink(Protocol):
    def add(self, job: Job, line: Mapping[str, Any]) -> None: ...


@dataclass
class JobHooks:
    """Callbacks of one job: progress to the display, cost to the budget, the stop check."""

    job: Job
    events: StudyEvents
    costs: LineSink
    stop: StopSignal
    planned: tuple[int | None, int] = (None, 0)
    """(items, done) the plan counted, for an executor whose job cannot report its own start."""

    def started(self, total: int | None, done: int) -> None:
        self.planned = (total, done)
        self.events.job_started(self.job, total, done)

    def answered(self, line: Mapping[str, Any]) -> None:
        self.events.job_advanced(self.job)
        self.costs.add(self.job, line)  # raises BudgetExceeded past the budget
        if self.stop.is_set():
            raise StudyStopped(f"{self.job.key}: stopped with the study (resumable)")

    def note(self, message: str) -> None:
        self.events.note(f"{self.job.key}: {message}")


def execute(job: Job, hooks: JobHooks, loaded: LoadedBenchmark | None = None) -> dict[str, Any]:
    """Do the job; the summary study.json keeps (see :func:`run_summary`)."""
    from medlens.analysis.artifacts import results_after_writing

    if isinstance(job, RunJob):
        from medlens.execution.evaluate import evaluate
        from medlens.study.adaptive_runs import planner_for

        outcome = evaluate(job.options, hooks.started, hooks.answered, hooks.note, loaded=loaded,
                           planner=planner_for(job))  # fmt: skip
        return run_summary(results_after_writing(outcome.store.view()))
    from medlens.judges.stage import judge_run

    judged = judge_run(job.options, hooks.started, hooks.answered)
    return judge_summary(results_after_writing(judged.run), job)


def stored_counts(folder: Path) -> dict[str, Any]:
    """``answered`` and ``errors`` of a run stopped before its results were derived, counted
    from its records (empty when it wrote none): the study's table shows what was kept."""
    from medlens.runs.layout import is_run
    from medlens.runs.view import RunView

    if not is_run(folder):
        return {}
    records = RunView(folder).records().values()
    errors = sum(1 for record in records if record.get("error"))
    return {"answered": len(records) - errors, "errors": errors}


def stored_judgements(job: JudgeJob, planned: tuple[int | None, int]) -> dict[str, Any]:
    """``judged`` (lines kept for good) and ``to_judge`` (the stage's lines in all, when its
    start said) of a judge stage stopped before its end; empty when it wrote nothing."""
    from medlens.runs.judgements import JudgeStore, judge_dir
    from medlens.runs.layout import judgements_file

    folder = judge_dir(job.options.run_dir, job.judge)
    if not judgements_file(folder).is_file():
        return {}  # not started, or a panel (its lines are written at its end)
    counts: dict[str, Any] = {"judged": len(JudgeStore.open(folder).done())}
    if planned[0] is not None:
        counts["to_judge"] = planned[0]
    return counts


def run_summary(results: Mapping[str, Any]) -> dict[str, Any]:
    """n, score and CI, and the counts of a run's results.json."""
    overall, counts = results.get("overall") or {}, results.get("counts") or {}
    return {
        "items": counts.get("items"),
        "answered": (counts.get("records") or 0) - (counts.get("errors") or 0),
        "errors": counts.get("errors"),
        "n": overall.get("n"),
        "score": overall.get("score"),
        "ci": overall.get("ci"),
        "random": overall.get("random"),
        "error_rate": (results.get("rates") or {}).get("error"),
    }


def judge_summary(results: Mapping[str, Any], job: JudgeJob) -> dict[str, Any]:
    entry = (results.get("judges") or {}).get(job.judge) or {}
    overall = entry.get("overall") or {}
    return {
        "n": overall.get("n"),
        "score": overall.get("score"),
        "ci": overall.get("ci"),
        "rule_score": overall.get("rule_score"),
        "calls": overall.get("calls"),
        "judge_errors": overall.get("judge_errors"),
    }


def result_of(summary: Mapping[str, Any], kind: str) -> JobResult:
    """A finished job's state: ``errors`` when some item (or judge call) errored."""
    errored = summary.get("errors") if kind == "run" else summary.get("judge_errors")
    return JobResult("errors" if errored else "done", dict(summary))


def guarded(call: Callable[[], dict[str, Any]], kind: str) -> JobResult:
    """The job's result; user errors become a state, bugs propagate."""
    from medlens.study.budget import BudgetExceeded

    try:
        return result_of(call(), kind)
    except (StudyStopped, BudgetExceeded) as exc:
        return JobResult("stopped", message=str(exc))
    except StorageError:
        raise  # a full disk fails every job after it: the study stops (exit 4, resumable)
    except MedlensError as exc:
        return JobResult("failed", message=str(exc))
