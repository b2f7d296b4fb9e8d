"""What `medlens study` shows: one live line per active run and judge, a line per finished one,
the final summary table, and the `--dry-run` plan with its projected cost (all on the terminal;
the study's files hold the same numbers)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from rich.progress import TaskID
from rich.table import Table
from rich.text import Text

from medlens.cli.common import console, err_console, progress_bar
from medlens.report.percent_text import percent, percent_ci
from medlens.study.budget import spent_line

if TYPE_CHECKING:
    from medlens.study.conduct import PreparedStudy, StudyResult
    from medlens.study.jobs import JobResult
    from medlens.study.plan import Job


class StudyProgress:
    """The study's events as rich progress lines (on stderr; called from worker threads)."""

    def __init__(self) -> None:
        self.bar = progress_bar("medlens study", unit="answers")
        self.tasks: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def job_started(self, job: Job, total: int | None, done: int) -> None:
        with self._lock:
            if not self.bar.live.is_started:
                self.bar.start()
            label = f"{job.kind} {job.key}"
            if job.key in self.tasks:
                self.bar.update(self.tasks[job.key], total=total, completed=done)
            else:
                self.tasks[job.key] = self.bar.add_task(label, total=total, completed=done)

    def job_advanced(self, job: Job) -> None:
        task = self.tasks.get(job.key)
        if task is not None:
            self.bar.advance(task)

    def job_finished(self, job: Job, result: JobResult) -> None:
        with self._lock:
            task = self.tasks.pop(job.key, None)
            if task is not None:
                self.bar.remove_task(task)
        self.bar.console.print(
            Text(f"{job.kind} {job.key}: {outcome_text(result)}"), soft_wrap=True
        )

    def note(self, message: str) -> None:
        self.bar.console.print(Text(f"note: {message}"), soft_wrap=True)

    def close(self) -> None:
        if self.bar.live.is_started:
            self.bar.stop()


def outcome_text(result: JobResult) -> str:
    summary = result.summary
    if result.state in ("done", "errors"):
        score = summary.get("score")
        text = result.state
        if score is not None:
            text += f", {percent(score)} [{percent_ci(summary.get('ci'))}] n={summary.get('n')}"
        if summary.get("errors"):
            text += f", {summary['errors']} errored items"
        return text
    return f"{result.state}: {result.message}" if result.message else result.state


def print_summary(prepared: PreparedStudy, result: StudyResult) -> None:
    plan, data = prepared.plan, result.record.data
    table = Table(title=Text(f"study {plan.study.name}"), title_justify="left")
    for header in ("run", "state", "answered", "score", "95% CI", "n", "errors", "judges"):
        table.add_column(header, justify="left" if header in ("run", "state", "judges") else "right",
                         overflow="fold")  # fmt: skip
    for key in plan.runs:
        state = data["runs"].get(key, {})
        judges = [f"{j.judge} {_judge_text(data['judges'].get(j.key, {}))}"
                  for j in plan.judges[key]]  # fmt: skip
        table.add_row(*(Text(cell) for cell in _run_cells(key, state)), Text("; ".join(judges)))
    console.print(table)
    if data.get("cost", {}).get("spent"):
        console.print(Text(spent_line(data["cost"])), soft_wrap=True)
    for board in result.boards:
        where = ", ".join(str(plan.folder / path) for path in board.files.values()) or "not written"
        console.print(Text(f"board {board.name}: {where}"), soft_wrap=True)
        for note in board.notes:
            console.print(Text(f"  {note}"), soft_wrap=True)
    if result.index is not None:
        page = f"study page: {result.index[1]} (and {result.index[0].name})"
        err_console.print(Text(page), soft_wrap=True)


def _run_cells(key: str, state: dict[str, Any]) -> list[str]:
    score, ci = state.get("score"), state.get("ci")
    return [
        key, str(state.get("state", "pending")),
        f"{state.get('answered', '–')}/{state.get('items', '–')}",
        percent(score) if score is not None else "–", percent_ci(ci) if ci else "–",
        str(state.get("n", "–")), str(state.get("errors") or 0),
    ]  # fmt: skip


def _judge_text(state: dict[str, Any]) -> str:
    score = state.get("score")
    text = str(state.get("state", "pending"))
    if state.get("judged") is not None:  # stopped: the lines it kept, of what it had to judge
        text += f" {state['judged']}/{state.get('to_judge', '–')} judged"
    return text + (f" {percent(score)} n={state.get('n')}" if score is not None else "")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def print_dry_run(prepared: PreparedStudy) -> None:
    """The plan: every run and judge with what it would send and cost; no model is called."""
    from medlens.study.conduct import dry_run, total_projection

    plan = prepared.plan
    rows = dry_run(prepared)
    study = plan.study
    stages = sum(len(j) for j in plan.judges.values())
    console.print(Text(
        f"study {study.name}: {_count(len(study.models), 'model')} × "
        f"{_count(len(study.benchmarks), 'benchmark')} = {_count(len(plan.runs), 'run')} "
        f"({len(plan.selected_runs)} selected), {_count(stages, 'judge stage')}, "
        f"{_count(len(study.boards), 'board')} and the models × benchmarks matrix, in {plan.folder}"
    ), soft_wrap=True)  # fmt: skip
    priced = any(m.price for m in study.models.values()) or any(
        j.price for j in study.judges.values()
    )
    table = Table(title=Text("plan"), title_justify="left")
    for header in ("job", "items", "to send", "requests", "state", "projected cost"):
        table.add_column(header, justify="left" if header in ("job", "state") else "right",
                         overflow="fold")  # fmt: skip
    for row in rows:
        bound = "≤ " if row.bound else ""
        table.add_row(*(Text(cell) for cell in (
            f"{row.kind} {row.key}", "–" if row.selected is None else str(row.selected),
            f"{bound}{row.to_send}", f"{bound}{row.requests}", row.state,
            _cost_text(row.projection) if priced else "–",
        )))  # fmt: skip
    console.print(table)
    from medlens.study.sampling import plan_lines

    for line in plan_lines(plan):
        console.print(Text(line), soft_wrap=True)
    runs = [r for r in rows if r.kind == "run"]
    judges = [r for r in rows if r.kind == "judge"]
    console.print(Text(
        f"requests: {sum(r.requests for r in runs)} model requests, "
        f"{'up to ' if any(r.bound for r in judges) else ''}{sum(r.requests for r in judges)} judge calls"
    ))  # fmt: skip
    if priced:
        _print_total(prepared, total_projection(rows), len(rows))
    else:
        console.print(Text("cost: no price given (add price = \"input=…,output=…\" to models "
                           "and judges to project it)"))  # fmt: skip
    console.print(Text("dry run: no model was called, nothing was written"))


def _cost_text(projection: Any) -> str:
    text = f"${projection.cost:.4f}"
    if projection.measured and projection.half_width is not None:
        text += f" ± {projection.half_width:.4f}"
    elif projection.cost and not projection.measured:
        text += " (estimated)"
    return text


def _print_total(
    prepared: PreparedStudy, total: tuple[float, float, float, int], jobs: int
) -> None:
    cost, low, high, measured = total
    spent = prepared.costs.spent
    console.print(Text(
        f"projected cost: ${cost:.4f} still to spend (95% CI ${low:.4f}–${high:.4f} from "
        f"measured per-item costs; {jobs - measured} of {jobs} jobs estimated from prompt length "
        "with no interval); spent so far: " + f"${spent:.4f}"
    ), soft_wrap=True)  # fmt: skip
    limit = prepared.plan.budget
    if limit is not None:
        verdict = "fits within" if spent + cost <= limit else "exceeds"
        console.print(Text(f"budget: spent + projected ${spent + cost:.4f} {verdict} the budget "
                           f"of ${limit:.2f}"))  # fmt: skip
