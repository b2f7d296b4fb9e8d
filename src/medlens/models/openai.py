"""OpenAI-compatible Chat Completions backend (vLLM, SGLang, LMDeploy, Ollama, hosted APIs):
owns sending a request and classifying how it went; what a reply says is ``openai_replies``.

One set of ``httpx.AsyncClient`` connections per backend (see ``connection_pool``); retries with
exponential backoff and jitter on rate limits, 5xx, timeouts, dropped connections and malformed
answers, honouring ``Retry-After``. An item that
exhausts its retries comes back as ``Response.error``, never as a (wrong) answer. The API key is
read from the environment variable the spec names and is kept out of the spec, errors and logs.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import httpx

from medlens.core.errors import ItemError, MedlensError
from medlens.core.specs import Spec
from medlens.models.base import (
    ErrorType,
    ImagePart,
    Message,
    ModelContext,
    ModelError,
    Request,
    Response,
    TextPart,
)
from medlens.models.connection_pool import ShardedClient
from medlens.models.endpoint_breaker import ConnectBreaker
from medlens.models.images import EncodedImages
from medlens.models.openai_replies import (
    Attempt,
    backoff_delay,
    is_content_filter,
    parsed_answer,
    retry_after_seconds,
    retry_attempt,
    with_option_probs,
)
from medlens.models.openai_settings import TRANSPORT_OPTIONS, OpenAISettings, parse_settings

__all__ = [  # retry timing and reply reading live in openai_replies; tests import them here
    "FATAL_STATUS",
    "LISTED_KEYS",
    "OpenAIChatModel",
    "ServerRejectedError",
    "backoff_delay",
    "endpoint_identity",
    "make_openai",
    "retry_after_seconds",
]

log = logging.getLogger(__name__)

# Status codes that say the configuration is wrong for every item: stop the run instead.
FATAL_STATUS = {
    401: "rejected the API key",
    403: "refused access",
    404: "does not know this endpoint or model",
}


class ServerRejectedError(MedlensError):
    """The server refuses every request (bad key, unknown model or URL)."""


SAMPLING_KEYS = ("temperature", "seed", "top_p", "max_tokens")
"""Request parameters that override the spec's generation settings for one request."""


def endpoint_identity(base_url: str) -> str:
    """``scheme://host:port/path`` of a base URL, normalised (case, default port, trailing
    slashes): the response cache's name for *which server* answered."""
    from urllib.parse import urlsplit

    parts = urlsplit(base_url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    port = port or {"http": 80, "https": 443}.get(scheme, 0)
    path = "/" + "/".join(piece for piece in parts.path.split("/") if piece)
    return f"{scheme}://{host}:{port}{path.rstrip('/') or ''}"


LISTED_KEYS = ("id", "root", "parent", "owned_by", "max_model_len")
"""The stable fields of a ``/v1/models`` entry (vLLM writes the time of the listing in
``created``): what the response cache compares to tell a new checkpoint behind an old name."""


class OpenAIChatModel:
    """Answers requests through ``POST {base_url}/chat/completions``."""

    worth_caching = True
    honours_sampling = True
    """Per-request temperature and seed reach the server (self-consistency can draw samples)."""
    reports_served_model = True
    """Answers name the model that served them (OpenAI ``model``)."""

    def __init__(self, spec: Spec, settings: OpenAISettings, concurrency: int) -> None:
        public = {k: v for k, v in spec.options.items() if k not in TRANSPORT_OPTIONS}
        self.spec = Spec(spec.name, spec.argument, public).canonical()
        body = settings.body_defaults
        self.deterministic = float(body.get("temperature", 0.0)) == 0.0 or "seed" in body
        self.generation = {
            k: body[k] for k in ("temperature", "max_tokens", "seed", "top_p") if k in body
        }
        """The generation fields every request carries (the run card shows them)."""
        self.settings = settings
        self.cache_identity = "endpoint=" + endpoint_identity(settings.base_url)
        self.max_tokens: int | None = body.get("max_tokens")
        self._api_key = os.environ.get(settings.api_key_env, "")
        self._url = settings.base_url + "/chat/completions"
        headers = {"content-type": "application/json"}
        if self._api_key:
            headers["authorization"] = f"Bearer {self._api_key}"
        size = settings.max_connections or max(1, concurrency)
        self._images = EncodedImages()
        self._breaker = ConnectBreaker(settings.base_url)
        self._client = ShardedClient(
            size,
            headers,
            # pool=None: waiting for a free connection is never a timeout, only the server is.
            httpx.Timeout(
                connect=settings.connect_timeout,
                read=settings.read_timeout,
                write=settings.read_timeout,
                pool=None,
            ),
        )

    async def generate(self, request: Request) -> Response:
        started = time.perf_counter()
        try:
            payload = await self._payload(request.messages, request.params)
        except ItemError as exc:  # an undecodable image fails this item only
            kind: ErrorType = "image" if exc.kind == "image" else "input"
            return Response(None, error=ModelError(kind, self._redact(str(exc))))
        settings = self.settings
        last: Attempt = Attempt()
        faults: Counter[str] = Counter()
        for attempt in range(settings.max_retries + 1):
            last = await self._attempt(payload)
            if last.response is not None:
                answered = with_option_probs(last.response, request)
                return dataclasses.replace(
                    answered, latency=time.perf_counter() - started, retries=dict(faults)
                )
            assert last.error is not None
            faults[last.error.type] += 1
            if attempt < settings.max_retries:
                delay = backoff_delay(
                    attempt, settings.backoff, settings.backoff_max, last.retry_after
                )
                log.debug("retry %d after %s in %.3fs", attempt + 1, last.error, delay)
                await asyncio.sleep(delay)
        assert last.error is not None
        tries = settings.max_retries + 1
        error = ModelError(
            last.error.type, f"{last.error.message} (gave up after {tries} attempts)"
        )
        faults[last.error.type] -= 1  # the final failure is the record's error, not a retry
        retries = {kind: n for kind, n in faults.items() if n}
        return Response(None, error=error, latency=time.perf_counter() - started, retries=retries)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def listed_model(self) -> dict[str, Any] | None:
        """This model's entry in the server's ``GET {base_url}/models`` (its LISTED_KEYS), or
        None when the server lists no such entry or cannot be asked."""
        try:
            reply = await self._client.clients[0].get(self.settings.base_url + "/models")
            entries = reply.json().get("data") if reply.status_code == 200 else None
        except (httpx.HTTPError, ValueError, AttributeError):
            return None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, dict) and entry.get("id") == self.settings.model:
                return {key: entry[key] for key in LISTED_KEYS if key in entry}
        return None

    async def _payload(self, messages: tuple[Message, ...], params: Mapping[str, Any]) -> bytes:
        """The JSON body, built once per item and reused by every retry.

        A request's own sampling parameters (self-consistency draws) override the spec's."""
        wire: list[dict[str, Any]] = []
        if self.settings.system and not any(m.role == "system" for m in messages):
            wire.append({"role": "system", "content": self.settings.system})
        for message in messages:
            wire.append({"role": message.role, "content": await self._content(message)})
        sampling = {key: params[key] for key in SAMPLING_KEYS if key in params}
        body = {
            "model": self.settings.model,
            "messages": wire,
            **self.settings.body_defaults,
            **sampling,
        }
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    async def _content(self, message: Message) -> str | list[dict[str, Any]]:
        if all(isinstance(part, TextPart) for part in message.parts):
            return "".join(part.text for part in message.parts if isinstance(part, TextPart))
        content: list[dict[str, Any]] = []
        for part in message.parts:
            if isinstance(part, TextPart):
                content.append({"type": "text", "text": part.text})
            elif isinstance(part, ImagePart):
                content.append({"type": "image_url", "image_url": await self._image_url(part)})
        return content

    async def _image_url(self, part: ImagePart) -> dict[str, str]:
        # decoding + PNG encoding is real CPU work: done off the event loop, once per image
        url = await self._images.url(part.data, part.sha256, part.name)
        image_url = {"url": url}
        if self.settings.image_detail:
            image_url["detail"] = self.settings.image_detail
        return image_url

    async def _attempt(self, payload: bytes) -> Attempt:
        """One POST; classify every way it can go wrong."""
        read_timeout = self.settings.read_timeout
        try:
            reply = await self._client.post(self._url, content=payload)
        except httpx.ConnectError as exc:  # no server behind base_url, or not yet?
            reason = self._redact(f"{type(exc).__name__}: {exc}")
            self._breaker.failed_to_connect(reason)
            return retry_attempt("connection", f"connection failed: {reason}")
        except httpx.TimeoutException as exc:
            if isinstance(exc, httpx.ConnectTimeout):
                waited = self.settings.connect_timeout
                self._breaker.failed_to_connect(f"no connection within {waited:g}s")
            return retry_attempt(
                "timeout", f"no answer within {read_timeout:g}s ({type(exc).__name__})"
            )
        except httpx.TransportError as exc:
            return retry_attempt("connection", f"connection failed: {type(exc).__name__}: {exc}")
        self._breaker.answered()
        status = reply.status_code
        if status == 429:
            return retry_attempt(
                "rate_limit", self._status_text(reply), retry_after_seconds(reply.headers)
            )
        if status >= 500:
            return retry_attempt(
                "server", self._status_text(reply), retry_after_seconds(reply.headers)
            )
        if status in FATAL_STATUS:
            raise ServerRejectedError(
                f"openai: {self.settings.base_url} {FATAL_STATUS[status]} "
                f"({self._status_text(reply)}; model {self.settings.model!r}, "
                f"key from ${self.settings.api_key_env})"
            )
        if status >= 400:
            kind: ErrorType = "refused_by_api" if is_content_filter(reply) else "input"
            return Attempt(Response(None, error=ModelError(kind, self._status_text(reply))))
        return parsed_answer(reply)

    def _status_text(self, reply: httpx.Response) -> str:
        detail = ""
        try:
            error = json.loads(reply.content).get("error")
            detail = error.get("message", "") if isinstance(error, dict) else str(error or "")
        except (ValueError, AttributeError):
            detail = reply.text[:200]
        text = f"HTTP {reply.status_code}" + (f": {detail[:300]}" if detail else "")
        return self._redact(text)

    def _redact(self, text: str) -> str:
        return text.replace(self._api_key, "***") if len(self._api_key) >= 4 else text


def make_openai(spec: Spec, context: ModelContext) -> OpenAIChatModel:
    """Factory for ``openai:MODEL?base_url=URL&api_key_env=VAR&...``."""
    settings = parse_settings(spec, context.params)
    # The runner's semaphore bounds requests in flight; the pool only needs to be as large.
    concurrency = int(context.concurrency or context.params.get("concurrency") or 128)
    return OpenAIChatModel(spec, settings, concurrency)
