"""The study's scheduler: lanes (one per endpoint) that take turns, jobs on lanes side by side.

Each lane runs one job at a time, in the plan's order, with a finished run's judges put at the
front of their own lane (a judge starts as soon as its run finished, while other runs still
answer, as VLMEvalKit overlaps inference and judging). Before a job starts, the budget's
projection of the study's total (spent + what running jobs still need + this job) must fit, or
nothing more starts and the study stops, saying which job would have gone over.

Only this thread writes study.json. Stopping (Ctrl-C, the budget, a bug in a job) sets one
event that every job checks after each answered line, so each stops with its records stored.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from medlens.execution.preparation import LoadedBenchmark
from medlens.study.budget import Projection, StudyCosts
from medlens.study.jobs import (
    FINISHED_STATES,
    JobHooks,
    JobResult,
    StudyEvents,
    execute,
    guarded,
    result_of,
    run_summary,
    stored_counts,
    stored_judgements,
)
from medlens.study.plan import Job, JudgeJob, RunJob, StudyPlan
from medlens.study.preview import RunPreview
from medlens.study.record import StudyRecord

TICK_S = 0.25
"""How often the scheduler wakes to poll a remote executor's files and update the display."""
GRACE_S = 30.0
"""How long a stopping study waits for its jobs to store what they answered (Ctrl-C)."""


class Executor(Protocol):
    """Where jobs run: threads of this process (local) or Ray tasks."""

    def submit(self, job: Job, hooks: JobHooks) -> Future[JobResult]: ...

    def poll(self) -> None: ...

    def stop(self) -> None: ...

    def close(self) -> None: ...


class LocalExecutor:
    """Each job in a thread of this process (runs are I/O-bound: their requests wait on servers)."""

    def __init__(self, loaded: Mapping[str, LoadedBenchmark]) -> None:
        self.loaded = loaded

    def submit(self, job: Job, hooks: JobHooks) -> Future[JobResult]:
        future: Future[JobResult] = Future()
        loaded = self.loaded.get(job.benchmark) if isinstance(job, RunJob) else None

        def target() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(guarded(lambda: execute(job, hooks, loaded), job.kind))
            except BaseException as exc:  # a bug: the scheduler re-raises it
                future.set_exception(exc)

        # daemon: a Ctrl-C'd study exits once its jobs stored their lines, not when the last
        # request in flight times out
        threading.Thread(target=target, name=f"medlens {job.key}", daemon=True).start()
        return future

    def poll(self) -> None:
        return None

    def stop(self) -> None:
        return None  # local jobs see the stop event themselves

    def close(self) -> None:
        return None


@dataclass
class StudyOutcome:
    results: dict[str, JobResult] = field(default_factory=dict)
    stop_reason: str | None = None
    """Why the study stopped before its end (the budget), else None."""
    interrupted: bool = False
    stopped_by: str | None = None
    """The job whose stop stopped the study (its message is `stop_reason`)."""


class Scheduler:
    def __init__(
        self,
        plan: StudyPlan,
        previews: Mapping[str, RunPreview],
        executor: Executor,
        costs: StudyCosts,
        events: StudyEvents,
        record: StudyRecord,
    ) -> None:
        self.plan, self.previews, self.executor = plan, previews, executor
        self.costs, self.events, self.record = costs, events, record
        self.stop = threading.Event()
        """Set: every job stops after its next answered line (Ctrl-C, spend past the budget)."""
        self.starting = True
        """False once the budget refused a job: running jobs finish, nothing more starts."""
        self.lanes: dict[str, deque[Job]] = {}
        self.active: dict[Future[JobResult], tuple[Job, Projection]] = {}
        self.outcome = StudyOutcome()
        self.hooks: dict[str, JobHooks] = {}

    def run(self) -> StudyOutcome:
        """Every selected run and judge, until done or stopped; re-raises a job's bug."""
        for job in self.plan.selected_runs:
            if self.previews[job.key].complete:
                self._finished(job, result_of(self._known_summary(job), "run"), announce=False)
            else:
                self._queue(job)
        try:
            self._loop()
        except KeyboardInterrupt:
            self.outcome.interrupted = True
            self._wind_down("interrupted")
            raise
        self._count_unstarted()
        passed = self.costs.passed
        if passed is not None and self.outcome.stopped_by == passed.job:
            self.outcome.stop_reason = self.costs.stop_message()  # every lane's in-flight in
        return self.outcome

    def _loop(self) -> None:
        while True:
            if self.starting and not self.stop.is_set():
                self._start_ready()
            if not self.active:
                return
            done, _ = wait(list(self.active), timeout=TICK_S, return_when=FIRST_COMPLETED)
            self.executor.poll()
            for future in done:
                job, _ = self.active.pop(future)
                try:
                    result = future.result()
                except BaseException:
                    self._wind_down("a job failed with a bug")
                    raise
                self._finished(job, result)

    def _count_unstarted(self) -> None:
        """A run the study did not start (the budget stopped it first) shows what it holds of
        its items (0/N, or what an earlier invocation answered), not –/–."""
        for job in self.plan.selected_runs:
            if job.key not in self.outcome.results:
                counts = stored_counts(job.options.out / job.key) or {"answered": 0, "errors": 0}
                self.record.update("runs", job.key, items=self.previews[job.key].selected, **counts)

    def _queue(self, job: Job, first: bool = False) -> None:
        lane = self.lanes.setdefault(job.lane, deque())
        lane.appendleft(job) if first else lane.append(job)

    def _start_ready(self) -> None:
        busy = {job.lane for job, _ in self.active.values()}
        for lane, jobs in self.lanes.items():
            if lane in busy or not jobs:
                continue
            job = jobs[0]
            projection = self._projection(job)
            over = self._over_budget(job, projection)
            if over:
                self.outcome.stop_reason = over
                self.starting = False  # running jobs were within the budget: they finish
                self.events.note(over)
                return
            jobs.popleft()
            self._start(job, projection)

    def _start(self, job: Job, projection: Projection) -> None:
        hooks = self.hooks[job.key] = JobHooks(job, self.events, self.costs, self.stop)
        if isinstance(job, RunJob):
            preview = self.previews[job.key]
            hooks.planned = (preview.selected, preview.selected - len(preview.todo))
        self.costs.begin(job)
        self.active[self.executor.submit(job, hooks)] = (job, projection)
        self.record.update(self._section(job), job.key, state="running")
        self.record.save()

    def _projection(self, job: Job) -> Projection:
        if self.costs.limit is None:
            return Projection(0.0, 0.0, 0, 0)
        if isinstance(job, RunJob):
            return self.costs.project_run(job)
        from medlens.study.judging import judge_projection

        return judge_projection(self.costs, job)

    def _over_budget(self, job: Job, projection: Projection) -> str | None:
        limit = self.costs.limit
        if limit is None:
            return None
        running = sum(max(0.0, p.cost - self.costs.spent_on(j)) for j, p in self.active.values())
        total = self.costs.spent + running + projection.cost
        if total <= limit:
            return None
        return (
            f"budget: stopping before {job.kind} {job.key}: spent ${self.costs.spent:.4f}, "
            f"running jobs need ≈ ${running:.4f} more, {job.key} ≈ ${projection.cost:.4f} "
            f"(projected ${total:.4f} > budget ${limit:.2f}); rerun with a larger --budget "
            "to continue"
        )

    def _finished(self, job: Job, result: JobResult, announce: bool = True) -> None:
        result = self._completed(job, result)
        self.outcome.results[job.key] = result
        fields: dict[str, Any] = {"state": result.state, **result.summary}
        for stale in ("judged", "to_judge"):  # a stopped stage's counts, once it has finished
            if stale not in fields:
                self.record.data[self._section(job)].get(job.key, {}).pop(stale, None)
        fields["message"] = result.message or None
        self.record.update(self._section(job), job.key, **fields)
        self.record.data["cost"] = self.costs.record()
        self.record.save()
        if announce:
            self.events.job_finished(job, result)
        if result.state == "stopped" and self.outcome.stop_reason is None:
            self.outcome.stop_reason = result.message
            self.outcome.stopped_by = job.key
            self.stop.set()
        if isinstance(job, RunJob) and result.state in FINISHED_STATES:
            for judge in reversed(self.plan.judges[job.key]):
                if announce or not self._judged_before(judge):
                    self._queue(judge, first=True)
        elif isinstance(job, RunJob):
            for judge in self.plan.judges[job.key]:
                skipped = JobResult("skipped", message=f"its run {result.state}")
                self.outcome.results[judge.key] = skipped
                self.record.update("judges", judge.key, state="skipped", message=skipped.message)

    def _completed(self, job: Job, result: JobResult) -> JobResult:
        """The result as the study shows it: a budget stop's message with its answers in flight
        counted, what a stopped job kept, the items a run covers."""
        passed = self.costs.passed
        if result.state == "stopped" and passed is not None and passed.job == job.key:
            result = replace(result, message=self.costs.stop_message())  # its in-flight counted
        if isinstance(job, RunJob) and not result.summary:  # stopped or failed: what it kept
            result.summary.update(stored_counts(job.options.out / job.key))
        elif isinstance(job, JudgeJob) and not result.summary and job.key in self.hooks:
            result.summary.update(stored_judgements(job, self.hooks[job.key].planned))
        if isinstance(job, RunJob) and result.summary:
            # what the run covers (its limit and selection), not the whole benchmark
            result.summary["items"] = self.previews[job.key].selected
        return result

    def _judged_before(self, judge: JudgeJob) -> bool:
        """A judge that finished on a run that has not changed since has nothing new to judge
        (rerunning it would only rewrite the run's results.json)."""
        return self.record.data["judges"].get(judge.key, {}).get("state") in FINISHED_STATES

    def _known_summary(self, job: RunJob) -> dict[str, Any]:
        """A run finished before this invocation: its summary from its results."""
        from medlens.analysis.artifacts import fresh_results

        return run_summary(fresh_results(job.options.out / job.key, note=None))

    def _wind_down(self, reason: str) -> None:
        """Stop every job and wait (bounded) until each has stored what it answered."""
        self.stop.set()
        self.executor.stop()
        if self.outcome.stop_reason is None:
            self.outcome.stop_reason = reason
        deadline = time.monotonic() + GRACE_S
        while self.active and time.monotonic() < deadline:
            try:
                done, _ = wait(list(self.active), timeout=TICK_S, return_when=FIRST_COMPLETED)
            except KeyboardInterrupt:  # a second Ctrl-C: leave at once
                break
            self.executor.poll()
            for future in done:
                job, _ = self.active.pop(future)
                if future.exception() is None:
                    self._finished(job, future.result())

    @staticmethod
    def _section(job: Job) -> str:
        return "judges" if isinstance(job, JudgeJob) else "runs"
