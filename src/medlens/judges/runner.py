"""Judge calls with bounded concurrency: request → model → parse (one retry) → judgement line.

The same shape as :func:`medlens.execution.execute.run_local`, on any model backend (wrapped in the
response cache by the caller), so a judge gets the backends' retries, pooling and batching.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from medlens.core.errors import ItemError
from medlens.judges.protocol import ParsedReply, parse_reply
from medlens.judges.tasks import JudgeSettings, JudgeTask, build_judge_request
from medlens.models.base import Model, ModelError, Request, Response

OnJudgement = Callable[[dict[str, Any]], None]
UNPARSEABLE_ATTEMPTS = 2
"""An unparseable reply is asked again once, then recorded as unparseable."""


async def judge_task(task: JudgeTask, model: Model, settings: JudgeSettings) -> dict[str, Any]:
    """One (item, repeat): at most two calls; item-level failures become an errored line."""
    request: Request | None = None
    response = Response(None)
    parsed = ParsedReply("error")
    latency = 0.0
    for attempt in range(UNPARSEABLE_ATTEMPTS):
        try:
            request = build_judge_request(task, model.spec, settings, attempt)
        except ItemError as exc:
            response = Response(None, error=ModelError("image", str(exc)))
            break
        started = time.perf_counter()
        response = await model.generate(request)
        if not response.latency and not response.cached:
            response = replace(response, latency=time.perf_counter() - started)
        latency += response.latency
        if response.error is not None:
            break
        parsed = parse_reply(settings.protocol, task.item, response.text)
        if parsed.status == "ok":
            break
    return judgement_line(task, request, response, parsed, latency)


def judgement_line(
    task: JudgeTask,
    request: Request | None,
    response: Response,
    parsed: ParsedReply,
    latency: float,
) -> dict[str, Any]:
    error = None
    status = parsed.status
    if response.error is not None:
        status, error = "error", {"type": response.error.type, "message": response.error.message}
    elif status == "unparseable":
        error = {"type": "unparseable", "message": parsed.problem}
    return {
        "id": task.item.id,
        "repeat": task.repeat,
        "by": "judge",
        "fingerprint": request.fingerprint if request else None,
        "output": response.text,
        "status": status,
        "verdict": parsed.verdict if status == "ok" else None,
        "score": parsed.score if status == "ok" else None,
        "error": error,
        "latency": round(latency, 6),
        "usage": dict(response.usage),
        "cached": response.cached,
    }


async def run_judge_local(
    tasks: Iterable[JudgeTask],
    model: Model,
    settings: JudgeSettings,
    on_judgement: OnJudgement,
    concurrency: int,
) -> None:
    """Judge `tasks` on this machine with at most `concurrency` calls in flight."""
    queue = iter(tasks)

    async def worker() -> None:
        for task in queue:
            on_judgement(await judge_task(task, model, settings))

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
