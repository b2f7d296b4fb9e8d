"""``medlens study --executor ray``: each run (and judge stage) of the study as one Ray task.

A task does exactly what a local job does (``study.jobs.execute``: ``evaluate`` or
``judge_run``, which load the benchmark and build the backend on the worker), so the study
folder must be on a filesystem every node sees (the task writes the run directory; the driver
reads it). The driver keeps the lanes and the budget: it starts a lane's next job when the last
one ends, follows each task's progress and cost by reading the lines its run or judge appends
(records.jsonl, judgements.jsonl). When the study stops (the budget, Ctrl-C, a failed job) the
driver writes the stop file in the study folder: each task sees it after its next answered
line, sends nothing more, stores the answers it had in flight (they are paid for) and ends as
``stopped``; a task still running when the study closes is cancelled (killed: it loses what it
had in flight), and a rerun resumes after the stored lines.
"""

from __future__ import annotations

import os
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import ray

from medlens.core.errors import MedlensError, StopAfterInFlight
from medlens.execution.ray import connect, needs_gpu
from medlens.runs.files import JsonLinesTail
from medlens.runs.judgements import judge_dir
from medlens.runs.layout import judgements_file, records_file
from medlens.study.budget import StudyCosts, TaskBudget
from medlens.study.jobs import JobHooks, JobResult, StudyEvents, execute, guarded
from medlens.study.plan import Job, RunJob


class _Quiet:
    """The events of a task on a worker: nobody is listening there (the driver reads files)."""

    def job_started(self, job: Job, total: int | None, done: int) -> None: ...

    def job_advanced(self, job: Job) -> None: ...

    def job_finished(self, job: Job, result: JobResult) -> None: ...

    def note(self, message: str) -> None: ...


class _NoCost:
    def add(self, job: Job, line: Any) -> None: ...


STOP_FILE = ".stopping"
"""In the study folder while the study stops: its tasks stop after their answers in flight."""


class StopFile:
    """The stop signal of a task on a worker: the driver's stop file exists."""

    def __init__(self, path: str) -> None:
        self.path = path

    def is_set(self) -> bool:
        return os.path.exists(self.path)


@ray.remote
def run_job_task(job: Job, stop_file: str, budget: TaskBudget | None) -> JobResult:
    """One job on a Ray worker; its user errors come back as a result, like a local job's."""
    events: StudyEvents = _Quiet()
    hooks = JobHooks(job, events, budget or _NoCost(), StopFile(stop_file))
    return guarded(lambda: execute(job, hooks), job.kind)


def lines_file(job: Job) -> Path:
    """The file the job appends one line to per answered item."""
    if isinstance(job, RunJob):
        return records_file(job.options.out / job.key)
    return judgements_file(judge_dir(job.options.run_dir, job.judge))


class RayExecutor:
    """Jobs as Ray tasks on the cluster at `address` (None: a local cluster, shut down after)."""

    def __init__(self, address: str | None, study_folder: Path) -> None:
        self.started = connect(address)
        self.stop_file = study_folder / STOP_FILE
        self.tasks: dict[str, tuple[Any, JobHooks, JsonLinesTail, Future[JobResult]]] = {}
        self.reasons: dict[str, str] = {}
        """Why the driver stopped a task (the budget), by job key."""
        self.submitted = 0

    def submit(self, job: Job, hooks: JobHooks) -> Future[JobResult]:
        if not self.submitted:  # a stop file left by a study that was killed while stopping
            self.stop_file.unlink(missing_ok=True)
        self.submitted += 1
        spec = job.options.model if isinstance(job, RunJob) else job.options.judge
        options = {"num_cpus": 1, "num_gpus": 1 if needs_gpu(spec) else 0}
        budget = hooks.costs.task_budget(job) if isinstance(hooks.costs, StudyCosts) else None
        ref = run_job_task.options(**options).remote(job, str(self.stop_file), budget)
        future: Future[JobResult] = Future()
        future.set_running_or_notify_cancel()
        ref.future().add_done_callback(lambda done: self._settle(job, done, future))
        self.tasks[job.key] = (ref, hooks, JsonLinesTail(lines_file(job)), future)
        hooks.started(*hooks.planned)
        return future

    def _settle(self, job: Job, done: Future[Any], future: Future[JobResult]) -> None:
        try:
            result = done.result()
            if result.state == "stopped" and job.key in self.reasons:
                result = replace(result, message=self.reasons[job.key])
            future.set_result(result)
        except ray.exceptions.TaskCancelledError:
            reason = self.reasons.get(job.key, f"{job.key}: stopped with the study (resumable)")
            future.set_result(JobResult("stopped", message=reason))
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, MedlensError):
                future.set_result(JobResult("failed", message=str(cause)))
            else:
                future.set_exception(exc)
        except BaseException as exc:
            future.set_exception(exc)

    def poll(self) -> None:
        """Progress and cost from each running task's file; a hook that stops (the budget, the
        study's stop) asks every task to stop after its answers in flight."""
        for key, (_, hooks, tail, future) in list(self.tasks.items()):
            finished = future.done()  # before reading: the lines of a finished task are all there
            for line in tail.new_lines():
                try:
                    hooks.answered(line)  # the lines in flight at a stop are counted too
                except StopAfterInFlight as exc:
                    self.reasons.setdefault(key, str(exc))
                    self.stop()
            if hooks.stop.is_set():
                self.stop()
            if finished:
                del self.tasks[key]

    def stop(self) -> None:
        """Ask every task to stop after its answers in flight (they read the stop file)."""
        if not self.stop_file.exists():
            self.stop_file.parent.mkdir(parents=True, exist_ok=True)
            self.stop_file.write_text("stopping\n", encoding="utf-8")

    def close(self) -> None:
        """Cancel the tasks still running (they lose what they had in flight; a rerun resumes)."""
        for ref, _, _, _ in self.tasks.values():
            ray.cancel(ref, force=True)
        self.stop_file.unlink(missing_ok=True)
        if self.started:
            ray.shutdown()
