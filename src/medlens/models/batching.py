"""Collect concurrent ``generate`` calls into batches for local engines (transformers, vLLM).

The runner issues one request per item with bounded concurrency; local engines are fastest when
they see many prompts at once. A :class:`BatchQueue` takes whatever requests are waiting (up to
``batch_size``), answers them in one worker thread (so the event loop stays free), and hands each
caller its own response.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass

from medlens.models.base import ModelError, Request, Response

AnswerBatch = Callable[[list[Request]], list[Response]]


@dataclass(frozen=True)
class Pending:
    """One request waiting for its batch."""

    request: Request
    future: asyncio.Future[Response]


class BatchQueue:
    """Requests in, batches to `answer_batch` (run in a thread, one batch at a time), responses out."""

    def __init__(self, answer_batch: AnswerBatch, batch_size: int, label: str) -> None:
        self.answer_batch = answer_batch
        self.batch_size = batch_size
        self.label = label
        self._queue: asyncio.Queue[Pending] | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, request: Request) -> Response:
        if self._queue is None:
            self._queue = asyncio.Queue()
            self._worker = asyncio.create_task(self._run(self._queue))
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        await self._queue.put(Pending(request, future))
        return await future

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        self._queue, self._worker = None, None

    async def _run(self, queue: asyncio.Queue[Pending]) -> None:
        while True:
            batch = [await queue.get()]
            await asyncio.sleep(0)  # let requests issued in the same tick join this batch
            while len(batch) < self.batch_size and not queue.empty():
                batch.append(queue.get_nowait())
            try:
                requests = [p.request for p in batch]
                responses = await asyncio.to_thread(self.answer_batch, requests)
            except Exception as exc:  # out of memory or an engine bug: fail these items, go on
                message = f"{self.label}: generation failed ({type(exc).__name__}: {exc})"
                responses = [Response(None, error=ModelError("input", message))] * len(batch)
            for pending, response in zip(batch, responses, strict=True):
                if not pending.future.done():
                    pending.future.set_result(response)
