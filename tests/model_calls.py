"""Backend tests' calls: requests built as the runner builds them, answered, the backend closed."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from medlens.core.items import Item
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import ImagePart, Message, Model, Request, Response


def requests_for(backend: Model, items: list[Item]) -> list[Request]:
    return [build_request(it, backend.spec, RunSettings(), None) for it in items]


def answer_requests(
    backend: Model, requests: list[Request], together: bool = True
) -> list[Response]:
    """Responses in order: all requests in flight at once (``together``) or one after another."""

    async def go() -> list[Response]:
        try:
            if together:
                return list(await asyncio.gather(*(backend.generate(r) for r in requests)))
            return [await backend.generate(r) for r in requests]
        finally:
            await backend.aclose()

    return asyncio.run(go())


def answer_items(backend: Model, items: list[Item], together: bool = True) -> list[Response]:
    return answer_requests(backend, requests_for(backend, items), together)


def with_broken_image(request: Request, data: bytes, name: str) -> Request:
    """``request`` with its first part, an image, replaced by undecodable ``data``."""
    first = request.messages[0]
    broken = ImagePart(data=data, sha256="x", name=name)
    message = Message(first.role, (broken, *first.parts[1:]))
    return replace(request, messages=(message, *request.messages[1:]))
