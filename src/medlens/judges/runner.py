"""Judge calls with bounded concurrency: request → model → read (one retry) → judgement line.

The same shape as :func:`medlens.execution.execute.run_local`, on any model backend (wrapped in the
response cache by the caller), so a judge gets the backends' retries, pooling and batching. A
reply without a verdict (an error, empty, cut at the token limit, unparseable, out of scale:
``judges/replies.py``) is asked once more, then recorded as it failed, never as a score.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from medlens.core.errors import ItemError, MedlensError
from medlens.execution.execute import answer_all
from medlens.judges.protocol import ParsedReply
from medlens.judges.replies import read_reply
from medlens.judges.tasks import JudgeSettings, JudgeTask, build_judge_request
from medlens.models.base import Model, ModelError, Request, Response

OnJudgement = Callable[[dict[str, Any]], None]
ATTEMPTS = 2
"""A reply without a verdict is asked again once, then recorded with its failure."""


class SelfJudgeError(MedlensError):
    """The judge answered with the model the run evaluates (see ``--allow-self-judge``)."""


async def judge_task(task: JudgeTask, model: Model, settings: JudgeSettings) -> dict[str, Any]:
    """One (item, repeat, order): at most two calls; item-level failures become a failed line."""
    request: Request | None = None
    response = Response(None)
    parsed = ParsedReply("error", failure="error")
    latency, calls, max_tokens = 0.0, 0, None
    for attempt in range(ATTEMPTS):
        try:
            request = build_judge_request(task, model.spec, settings, attempt, max_tokens)
        except ItemError as exc:  # an unreadable image: asking again gives the same
            response = Response(None, error=ModelError("image", str(exc)))
            parsed = read_reply(settings.protocol, task.item, response)
            break
        started = time.perf_counter()
        response = await model.generate(request)
        if not response.latency and not response.cached:
            response = replace(response, latency=time.perf_counter() - started)
        refuse_self_judge(response, settings)
        latency += response.latency
        calls += 0 if response.cached else 1
        parsed = read_reply(settings.protocol, task.item, response)
        if parsed.status == "ok":
            break
        forget_reply(model, response)
        if parsed.failure == "truncated":
            max_tokens = larger_cap(model)
    return judgement_line(task, request, response, parsed, (latency, calls), settings.swap)


def forget_reply(model: Model, response: Response) -> None:
    """A reply without a verdict leaves the response cache (``CachingModel.forget``): a rerun,
    or ``judge --retry-errors``, asks the judge again instead of reading the failure back."""
    forget = getattr(model, "forget", None)
    if callable(forget) and response.cache_key:
        forget(response.cache_key)


def larger_cap(model: Model) -> int | None:
    """Twice the judge's own ``max_tokens`` for the retry of a cut reply (None: not known, so
    the retry asks with the server's default again)."""
    cap = getattr(model, "max_tokens", None)
    return 2 * cap if isinstance(cap, int) and cap > 0 else None


def refuse_self_judge(response: Response, settings: JudgeSettings) -> None:
    served = (response.served_model or "").lower()
    if served and served in settings.self_models:
        raise SelfJudgeError(
            f"the judge server answered as {response.served_model!r}, the model this run "
            "evaluates: a model judging its own answers is refused (--allow-self-judge to "
            "judge anyway; every judged table is then marked self-judged)"
        )


def judgement_line(
    task: JudgeTask,
    request: Request | None,
    response: Response,
    parsed: ParsedReply,
    effort: tuple[float, int],
    swap: bool = False,
) -> dict[str, Any]:
    """The judgements.jsonl line; `effort` is (latency, live calls made)."""
    latency, calls = effort
    error = None
    if response.error is not None:
        error = {"type": response.error.type, "message": response.error.message}
    elif parsed.status != "ok":
        error = {"type": parsed.failure or "unparseable", "message": parsed.problem}
    line = {
        "id": task.item.id,
        "repeat": task.repeat,
        "by": "judge",
        "fingerprint": request.fingerprint if request else None,
        "output": response.text,
        "status": parsed.status,
        "verdict": parsed.verdict if parsed.status == "ok" else None,
        "score": parsed.score if parsed.status == "ok" else None,
        "error": error,
        "failure": parsed.failure or None,
        "latency": round(latency, 6),
        "calls": calls,
        "usage": dict(response.usage),
        "cached": response.cached,
        "cache_key": response.cache_key,
        "served_model": response.served_model,
        "system_fingerprint": response.system_fingerprint,
    }
    if swap:
        line["order"] = "swapped" if task.swapped else "given"
    return line


async def run_judge_local(
    tasks: Iterable[JudgeTask],
    model: Model,
    settings: JudgeSettings,
    on_judgement: OnJudgement,
    concurrency: int,
) -> None:
    """Judge `tasks` on this machine with at most `concurrency` calls in flight; a stop raised
    by `on_judgement` (a study's budget) keeps the calls in flight: they are awaited and passed
    on, then the stop is raised (``execution.execute.answer_all``)."""

    async def judge(task: JudgeTask) -> dict[str, Any]:
        return await judge_task(task, model, settings)

    await answer_all(tasks, judge, on_judgement, concurrency)
