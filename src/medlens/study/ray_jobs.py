"""``medlens study --executor ray``: each run (and judge stage) of the study as one Ray task.

A task does exactly what a local job does (``study.jobs.execute``: ``evaluate`` or
``judge_run``, which load the benchmark and build the backend on the worker), so the study
folder must be on a filesystem every node sees (the task writes the run directory; the driver
reads it). The driver keeps the lanes and the budget: it starts a lane's next job when the last
one ends, follows each task's progress and cost by reading the lines its run or judge appends
(records.jsonl, judgements.jsonl), and cancels the tasks when the study stops (a cancelled task
is killed: it loses the requests it had in flight, and a rerun resumes after its stored lines).
"""

from __future__ import annotations

import contextlib
import json
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import ray

from medlens.core.errors import MedlensError
from medlens.execution.ray import connect, needs_gpu
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


@ray.remote
def run_job_task(job: Job) -> JobResult:
    """One job on a Ray worker; its user errors come back as a result, like a local job's."""
    import threading

    events: StudyEvents = _Quiet()
    hooks = JobHooks(job, events, _NoCost(), threading.Event())
    return guarded(lambda: execute(job, hooks), job.kind)


def lines_file(job: Job) -> Path:
    """The file the job appends one line to per answered item."""
    if isinstance(job, RunJob):
        return job.options.out / job.key / "records.jsonl"
    return job.options.run_dir / "judges" / job.judge / "judgements.jsonl"


class FileTail:
    """The complete lines appended to a file since the last read (a torn last line waits)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.is_file() else 0

    def new_lines(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        out = []
        for raw in data[:end].splitlines():
            with contextlib.suppress(ValueError):
                value = json.loads(raw)
                if isinstance(value, dict):
                    out.append(value)
        return out


class RayExecutor:
    """Jobs as Ray tasks on the cluster at `address` (None: a local cluster, shut down after)."""

    def __init__(self, address: str | None) -> None:
        self.started = connect(address)
        self.tasks: dict[str, tuple[Any, JobHooks, FileTail, Future[JobResult]]] = {}
        self.reasons: dict[str, str] = {}
        """Why the driver cancelled a task (the budget), by job key."""

    def submit(self, job: Job, hooks: JobHooks) -> Future[JobResult]:
        spec = job.options.model if isinstance(job, RunJob) else job.options.judge
        options = {"num_cpus": 1, "num_gpus": 1 if needs_gpu(spec) else 0}
        ref = run_job_task.options(**options).remote(job)
        future: Future[JobResult] = Future()
        future.set_running_or_notify_cancel()
        ref.future().add_done_callback(lambda done: self._settle(job, done, future))
        self.tasks[job.key] = (ref, hooks, FileTail(lines_file(job)), future)
        hooks.started(*hooks.planned)
        return future

    def _settle(self, job: Job, done: Future[Any], future: Future[JobResult]) -> None:
        try:
            future.set_result(done.result())
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
        study's stop) cancels the task."""
        for key, (ref, hooks, tail, future) in list(self.tasks.items()):
            finished = future.done()  # before reading: the lines of a finished task are all there
            try:
                for line in tail.new_lines():
                    hooks.answered(line)
            except MedlensError as exc:
                self.reasons.setdefault(key, str(exc))
                hooks.stop.set()
                if not finished:
                    ray.cancel(ref, force=True)
            if finished:
                del self.tasks[key]

    def stop(self) -> None:
        for ref, _, _, _ in self.tasks.values():
            ray.cancel(ref, force=True)

    def close(self) -> None:
        if self.started:
            ray.shutdown()
