"""The runner: item → request → model → extraction → score → record, with bounded concurrency.

How an executor plugs in: an executor is an async function with the shape of :func:`run_local`:
it receives the items still to do, a way to get a model, the :class:`RunSettings` and a callback
``on_record(record)`` that it must call (in the driver process) once per finished item. The
per-item work is :func:`process_item`; executors differ only in where that runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from medlens.core.errors import ItemError, StopAfterInFlight
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.execution.consistency import answer_by_vote
from medlens.execution.refinement import answer_by_refinement
from medlens.execution.replies import make_record, timed_generate
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import Model, Response

if TYPE_CHECKING:
    from medlens.execution.probes import Probe

OnRecord = Callable[[Record], None]
Task = TypeVar("Task")
Answer = TypeVar("Answer")


async def process_item(
    item: Item, model: Model, settings: RunSettings, probe: Probe | None
) -> Record:
    """Do all the work for one item; item-level failures become an errored record."""
    from medlens.models.base import ModelError

    try:
        reads_images = getattr(model, "reads_images", True)
        request = build_request(item, model.spec, settings, probe, reads_images)
    except ItemError as exc:
        failed = Response(text=None, error=ModelError(exc.kind, str(exc)))  # type: ignore[arg-type]
        return make_record(item, None, failed, settings.extract)
    if settings.strategy.refine:
        return await answer_by_refinement(item, request, model, settings)
    if settings.strategy.samples > 1:
        return await answer_by_vote(item, request, model, settings)
    response, latency = await timed_generate(model, request)
    return make_record(
        item, request, response, settings.extract, cot=settings.strategy.cot, latency=latency
    )


async def run_local(
    items: Iterable[Item],
    model: Model,
    settings: RunSettings,
    on_record: OnRecord,
    probe: Probe | None = None,
) -> None:
    """Run items on this machine with at most `settings.concurrency` requests in flight; a stop
    raised by `on_record` keeps the answers in flight (see :func:`answer_all`)."""

    async def answer(item: Item) -> Record:
        return await process_item(item, model, settings, probe)

    await answer_all(items, answer, on_record, settings.concurrency)


async def answer_all(
    work: Iterable[Task],
    answer: Callable[[Task], Awaitable[Answer]],
    deliver: Callable[[Answer], None],
    concurrency: int,
) -> None:
    """`answer` each of `work` with at most `concurrency` at once, `deliver` each answer.

    When `deliver` raises :class:`StopAfterInFlight`, no worker takes another task; the answers
    still in flight are awaited and delivered too (they are paid for; `deliver` may raise again
    for them), then the first such error is raised. Any other error stops at once."""
    queue = iter(work)
    stopping: list[StopAfterInFlight] = []

    async def worker() -> None:
        for task in queue:
            result = await answer(task)
            try:
                deliver(result)
            except StopAfterInFlight as exc:
                stopping.append(exc)
            if stopping:
                return

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    if stopping:
        raise stopping[0]
