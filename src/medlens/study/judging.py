"""How many calls a judge stage will make, and what the prompts of a few of them weigh.

For a run that has answered, the calls are the judge stage's own plan (``prepare_judge``: rules
first, then the calls not made yet); for items not answered yet, an upper bound: each item of a
kind the protocol judges, × repeats (the rules will settle some). The prompt of each call is the
judge prompt built as the stage builds it; for an unanswered item the reference answer stands
in for the model's (the answer is not known before the run).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, replace

from medlens.analysis.cost import DEFAULT_OUTPUT_TOKENS, TOKENS_PER_IMAGE
from medlens.core.items import Item
from medlens.judges.tasks import JudgeSettings, JudgeTask, build_judge_request
from medlens.runs.layout import has_records, is_judge_stage
from medlens.study.budget import Projection, StudyCosts
from medlens.study.plan import JudgeJob

SAMPLED_PROMPTS = 64
"""Prompts built per judge stage to estimate the tokens of a call."""


@dataclass(frozen=True)
class JudgeWork:
    calls: int
    """Calls to make (judged ones excluded); for unanswered items an upper bound."""
    bound: bool
    """True when `calls` counts unanswered items (an upper bound)."""
    input_tokens: float
    """Estimated input tokens per call (characters ÷ 4, 85 per image)."""


def judge_work(job: JudgeJob, unanswered: Iterable[Item] = ()) -> JudgeWork:
    """The calls `job` still has to make (see the module docstring)."""
    tasks, settings = _planned_tasks(job)
    with_images = job.options.images or settings.protocol.shows_images
    stand_ins = [
        JudgeTask(item, str(item.options.get(str(item.answer), item.answer)), repeat)
        for item in unanswered
        if item.kind in settings.kinds and isinstance(item.answer, str)
        for repeat in range(settings.repeats)
    ]
    every = tasks + stand_ins
    sizes = []
    for task in every[:: max(1, len(every) // SAMPLED_PROMPTS)][:SAMPLED_PROMPTS]:
        request = build_judge_request(task, str(job.options.judge), settings, 0)
        text = sum(len(getattr(p, "text", "")) for m in request.messages for p in m.parts)
        images = len(task.item.images) if with_images else 0
        sizes.append(text / 4 + TOKENS_PER_IMAGE * images)
    tokens = sum(sizes) / len(sizes) if sizes else 0.0
    return JudgeWork(len(every), bool(stand_ins), tokens)


def _planned_tasks(job: JudgeJob) -> tuple[list[JudgeTask], JudgeSettings]:
    """The stage's remaining calls (none when its run has no records yet) and its settings,
    with images off: prompts are measured without reading pixels (images are counted)."""
    from medlens.judges.stage import prepare_judge

    options = replace(job.options, images=False)
    if not has_records(options.run_dir):
        return [], _settings_only(job)
    plan = prepare_judge(options)
    todo: list[JudgeTask] = []
    for stage in plan.stages:  # one judge, or each member of a panel
        asyncio.run(stage.model.aclose())
        done: set[tuple[str, int]] = set()
        if is_judge_stage(stage.folder):
            from medlens.runs.judgements import JudgeStore

            done = JudgeStore.open(stage.folder).done()
        todo += [t for t in stage.tasks if (t.item.id, t.repeat) not in done]
    return todo, plan.stages[0].settings


def _settings_only(job: JudgeJob) -> JudgeSettings:
    from medlens.judges.protocols import load_protocol

    options = job.options
    protocol = load_protocol(options.protocol, options.weights)
    return JudgeSettings(
        protocol=protocol, scope=options.scope or protocol.default_scope,
        repeats=options.repeats, images=False, with_question=options.with_question,
        kinds=frozenset(protocol.kinds | ({"report"} if options.reports else set())),
    )  # fmt: skip


def judge_projection(
    costs: StudyCosts, job: JudgeJob, unanswered: Iterable[Item] = ()
) -> Projection:
    """The projected cost of the judge's remaining calls."""
    work = judge_work(job, unanswered)
    price = costs.price(job)
    max_tokens = job.options.judge.option("max_tokens") or ""
    output = float(max_tokens) if max_tokens.isdigit() else float(DEFAULT_OUTPUT_TOKENS)
    return costs.project_judge(job, work.calls, price.of(work.input_tokens, output))
