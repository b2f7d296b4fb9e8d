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
from typing import Any, TypeVar

from medlens.core.errors import ItemError
from medlens.models.base import ImagePart, Message, ModelError, Request, Response

AnswerBatch = Callable[[list[Request]], list[Response]]
Prepared = TypeVar("Prepared")


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


def token_usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    """``Response.usage`` from the token counts an engine reports."""
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def chat_turns(
    messages: tuple[Message, ...], image_content: Callable[[ImagePart], dict[str, Any]]
) -> list[dict[str, Any]]:
    """medlens messages → chat-format turns; ``image_content`` is how this engine takes images."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        content = [
            image_content(part)
            if isinstance(part, ImagePart)
            else {"type": "text", "text": part.text}
            for part in message.parts
        ]
        turns.append({"role": message.role, "content": content})
    return turns


class BatchedModel:
    """A local engine behind a :class:`BatchQueue`: ``generate`` queues, ``answer_batch`` answers."""

    def __init__(self, batch_size: int, label: str) -> None:
        # Looked up per batch, so a test can replace ``answer_batch`` on the instance.
        self._batches = BatchQueue(lambda requests: self.answer_batch(requests), batch_size, label)

    async def generate(self, request: Request) -> Response:
        return await self._batches.submit(request)

    async def aclose(self) -> None:
        await self._batches.aclose()

    def answer_batch(self, requests: list[Request]) -> list[Response]:
        raise NotImplementedError


def answer_prepared(
    requests: list[Request],
    prepare: Callable[[tuple[Message, ...]], Prepared],
    answer: Callable[[list[Prepared]], list[Response]],
) -> list[Response]:
    """Answer in one call every request whose messages ``prepare`` could convert, in order.

    A request whose images cannot be read (``ItemError``) fails alone, as an ``image`` error.
    """
    responses: dict[int, Response] = {}
    ready: list[Prepared] = []
    positions: list[int] = []
    for index, request in enumerate(requests):
        try:
            ready.append(prepare(request.messages))
            positions.append(index)
        except ItemError as exc:
            responses[index] = Response(None, error=ModelError("image", str(exc)))
    if ready:
        for index, response in zip(positions, answer(ready), strict=True):
            responses[index] = response
    return [responses[index] for index in range(len(requests))]
