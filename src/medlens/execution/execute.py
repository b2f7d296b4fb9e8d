"""The runner: item → request → model → extraction → score → record, with bounded concurrency.

How an executor plugs in: an executor is an async function with the shape of :func:`run_local`:
it receives the items still to do, a way to get a model, the :class:`RunSettings` and a callback
``on_record(record)`` that it must call (in the driver process) once per finished item. The
per-item work is :func:`process_item`; executors differ only in where that runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

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
    """Run items on this machine with at most `settings.concurrency` requests in flight.

    When `on_record` raises :class:`StopAfterInFlight`, no worker takes another item; the
    answers still in flight are awaited and passed to `on_record` (they are paid for), then the
    first such error is raised."""
    queue = iter(items)
    stopping: list[StopAfterInFlight] = []

    async def worker() -> None:
        for item in queue:
            record = await process_item(item, model, settings, probe)
            try:
                on_record(record)
            except StopAfterInFlight as exc:
                stopping.append(exc)
            if stopping:
                return

    await asyncio.gather(*(worker() for _ in range(max(1, settings.concurrency))))
    if stopping:
        raise stopping[0]
