"""What a study has spent and what the rest will cost, from the cost model of ``analysis.cost``.

Spent: billed tokens (records and judgements not from the response cache) × the entry's price,
read from the run directories at start and added per record while the study runs. Projected:
per run, N items still to send × the mean per-item cost *measured on this run's own records*
(the Student-t interval of that mean, as ``medlens cost`` projects); a run with no measured
record yet is estimated from its prompts as ``run --dry-run --price`` does (characters ÷ 4, 85
tokens per image, ``max_tokens`` or 64 output tokens per answer) — an assumption, shown as such,
with no interval. Judges likewise, per call, measured on the judge's calls anywhere in the study,
else estimated from the judge prompt with the reference answer standing in for the model's.
Intervals of several runs are combined as independent (half-widths added in quadrature).

Prices are optional; with a budget, every ``openai:`` model and judge needs one (other backends
run locally and bill no tokens unless priced).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medlens.analysis.cost import (
    TOKENS_PER_IMAGE,
    Price,
    answer_tokens,
    estimate_prompt_cost,
    judgement_lines,
    mean_interval,
    strategy_estimate,
    usage_tokens,
)
from medlens.core.errors import InputError, StopAfterInFlight
from medlens.study.plan import Job, JudgeJob, RunJob, StudyPlan
from medlens.study.preview import RunPreview

FREE = Price(0.0, 0.0)


class BudgetExceeded(StopAfterInFlight):
    """The measured spend reached the budget while a run or judge was answering (the answers
    already sent for are kept: they are paid for)."""


@dataclass
class BudgetPassed:
    """When the measured spend first passed the budget, and what came in after (the answers
    in flight then, stored because they are paid for)."""

    job: str
    at: float
    """The study's spend, the answer that passed the budget included."""
    kept: int = 0
    """Answers billed after it: in flight at the stop (with ``--executor ray`` also those sent
    before the stop reached the task: the driver reads the tasks' lines every quarter second)."""
    kept_cost: float = 0.0


@dataclass
class TaskBudget:
    """The budget a Ray task keeps by itself: what was left of it when the task started. The
    task stops (keeping its answers in flight) as soon as its own spend passes that, without
    waiting for the driver to read its lines; the driver still stops it when several tasks
    together pass the budget."""

    price: Price
    left: float
    spent: float = 0.0

    def add(self, job: Job, line: Mapping[str, Any]) -> None:
        if line.get("cached"):
            return
        cost = line_cost(line, self.price)
        self.spent += cost
        if cost > 0 and self.spent > self.left:
            raise BudgetExceeded(f"budget: passed while {job.key} was answering")


@dataclass(frozen=True)
class Projection:
    """The projected cost of one job's remaining work."""

    cost: float
    half_width: float | None
    """Half the 95% interval; None when estimated from prompts (no measurement to spread)."""
    calls: int
    measured: int
    """Calls whose cost was measured (0: estimated from prompt length)."""


def combine(projections: Iterable[Projection]) -> tuple[float, float, float, int]:
    """(total, low, high, measured-based count) of independent projections."""
    items = list(projections)
    total = sum(p.cost for p in items)
    half = math.sqrt(sum((p.half_width or 0.0) ** 2 for p in items))
    return total, max(0.0, total - half), total + half, sum(1 for p in items if p.measured)


def line_cost(line: Mapping[str, Any], price: Price) -> float:
    return price.of(*usage_tokens(line.get("usage")))


def _measured(lines: Iterable[Mapping[str, Any]], price: Price) -> list[float]:
    """Per-call costs of the lines that report usage (cached ones too: new calls would pay)."""
    return [line_cost(line, price) for line in lines if any(usage_tokens(line.get("usage")))]


def project(calls: int, measured: Sequence[float], estimate_per_call: float) -> Projection:
    if calls == 0:
        return Projection(0.0, 0.0, 0, len(measured))
    if not measured:
        return Projection(calls * estimate_per_call, None, calls, 0)
    mean, low, high = mean_interval(measured)
    return Projection(calls * mean, calls * (high - low) / 2, calls, len(measured))


class StudyCosts:
    """Prices, the spend so far (thread-safe: runs add to it as they answer) and projections."""

    def __init__(self, plan: StudyPlan, previews: Mapping[str, RunPreview]) -> None:
        self.plan = plan
        self.previews = previews
        self.limit = plan.budget
        self._lock = threading.Lock()
        self.spent = 0.0
        self.passed: BudgetPassed | None = None
        """Set when the spend passed the budget while a job answered."""
        self._job_spent: dict[str, float] = {}
        self.run_lines: dict[str, list[dict[str, Any]]] = {}
        self.judge_lines: dict[str, list[dict[str, Any]]] = {}
        self._read_disk()

    def price(self, job: Job) -> Price:
        study = self.plan.study
        entry = study.models[job.model] if isinstance(job, RunJob) else study.judges[job.judge]
        return entry.price or FREE

    def check_prices(self) -> None:
        """With a budget, a paid backend without a price is refused (its cost is unknown)."""
        if self.limit is None:
            return
        study = self.plan.study
        for section, entries in (("models", study.models), ("judges", study.judges)):
            for label, entry in entries.items():
                if entry.price is None and entry.spec.name == "openai":
                    raise InputError(
                        study.path, f"line {entry.line}, key {section}.{label}",
                        "a budget needs the price of every openai: backend: add price = "
                        "\"input=USD_PER_1M,output=USD_PER_1M\" (0 for a local server)",
                    )  # fmt: skip

    def _read_disk(self) -> None:
        from medlens.runs.layout import is_run
        from medlens.runs.view import RunView

        for key, job in self.plan.runs.items():
            folder = job.options.out / key
            if not is_run(folder):
                continue
            lines = list(RunView(folder).records().values())
            self.run_lines[key] = lines
            self.spent += sum(line_cost(x, self.price(job)) for x in lines if not x.get("cached"))
            for judge in self.plan.judges[key]:
                mine = judgement_lines(folder).get(judge.judge, [])
                self.judge_lines.setdefault(judge.judge, []).extend(mine)
                self.spent += sum(
                    line_cost(x, self.price(judge)) for x in mine if not x.get("cached")
                )

    def begin(self, job: Job) -> None:
        with self._lock:
            self._job_spent[job.key] = 0.0

    def spent_on(self, job: Job) -> float:
        """Billed since `job` started (in this invocation)."""
        with self._lock:
            return self._job_spent.get(job.key, 0.0)

    def add(self, job: Job, line: Mapping[str, Any]) -> None:
        """One record or judgement answered: its billed cost; BudgetExceeded past the budget
        (again for each paid answer in flight at the stop: they are counted and kept)."""
        if line.get("cached"):
            return
        cost = line_cost(line, self.price(job))
        with self._lock:
            self.spent += cost
            self._job_spent[job.key] = self._job_spent.get(job.key, 0.0) + cost
            if self.passed is not None:
                self.passed.kept += 1
                self.passed.kept_cost += cost
            elif self.limit is not None and cost > 0 and self.spent > self.limit:
                self.passed = BudgetPassed(job.key, self.spent)
            over = self.passed is not None and cost > 0
        if over:
            raise BudgetExceeded(self.stop_message())

    def task_budget(self, job: Job) -> TaskBudget | None:
        """What a remote task may spend by itself (None: no budget)."""
        if self.limit is None:
            return None
        with self._lock:
            return TaskBudget(self.price(job), self.limit - self.spent)

    def stop_message(self) -> str:
        """Why the study stopped at the budget, with what it spent up to now (the message is
        rebuilt when the answers in flight are in: its figures then match the final spend)."""
        passed, limit = self.passed, self.limit or 0.0
        assert passed is not None
        text = (
            f"budget: ${passed.at:.4f} spent, over the budget of ${limit:.2f}, while "
            f"{passed.job} was answering; no new request was sent"
        )
        if passed.kept:
            answers = "answer" if passed.kept == 1 else "answers"
            text += (
                f"; the {passed.kept} {answers} that came in after it were kept (paid for: "
                f"${passed.kept_cost:.4f} more, ${self.spent:.4f} spent in all)"
            )
        return text + "; rerun with a larger --budget to continue"

    def record(self) -> dict[str, Any]:
        """The study.json ``cost`` object."""
        data: dict[str, Any] = {"spent": self.spent, "budget": self.limit}
        if self.passed is not None:
            data["passed_at"] = self.passed.at
            data["kept_after_stop"] = {"answers": self.passed.kept, "cost": self.passed.kept_cost}
        return data

    def project_run(self, job: RunJob) -> Projection:
        preview = self.previews[job.key]
        samples = preview.settings.strategy.requests_per_item
        price = self.price(job)
        if price == FREE:
            return Projection(0.0, 0.0, len(preview.todo) * samples, 0)
        measured = _measured(self.run_lines.get(job.key, []), price)
        estimate = 0.0
        if not measured and preview.todo:
            estimate = estimate_run(preview, price, job)
        return project(len(preview.todo), measured, estimate / max(1, len(preview.todo)))

    def project_judge(self, job: JudgeJob, calls: int, per_call_estimate: float) -> Projection:
        price = self.price(job)
        if price == FREE:
            return Projection(0.0, 0.0, calls, 0)
        measured = _measured(self.judge_lines.get(job.judge, []), price)
        return project(calls, measured, per_call_estimate)


def estimate_run(preview: RunPreview, price: Price, job: RunJob) -> float:
    """The prompt-length estimate of the items still to send (`run --dry-run --price`)."""
    from medlens.execution.dry_run import planned_prompts

    prompts = list(planned_prompts(preview.todo, preview.settings))
    reasoning = preview.settings.strategy.cot  # a chain of thought answers at length
    estimate = estimate_prompt_cost(
        (p.text for p in prompts), price,
        output_tokens_per_item=answer_tokens(job.options.model.option("max_tokens"), reasoning),
        tokens_per_image=TOKENS_PER_IMAGE, images_per_prompt=[len(p.images) for p in prompts],
    )  # fmt: skip
    strategy = preview.settings.strategy
    scaled = strategy_estimate(estimate, strategy.requests_per_item, strategy.refine)
    return price.of(scaled["tokens"]["input"], scaled["tokens"]["output"])


def spent_line(cost: Mapping[str, Any]) -> str:
    """``spent: $X of a $B budget``, saying how the spend came past the budget after a stop."""
    budget = cost.get("budget")
    text = f"spent: ${cost['spent']:.4f}" + (
        f" of a ${budget:.2f} budget" if budget is not None else ""
    )
    kept = cost.get("kept_after_stop") or {}
    if cost.get("passed_at") is not None:
        text += f" (${cost['passed_at']:.4f} when the budget was passed"
        if kept.get("answers"):
            answers = "answer" if kept["answers"] == 1 else "answers"
            text += f" + ${kept['cost']:.4f} for the {kept['answers']} {answers} that came in after"
        text += ")"
    return text
