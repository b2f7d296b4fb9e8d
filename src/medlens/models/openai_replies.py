"""What an OpenAI-compatible server's reply means: a 200 answer's text, usage, served model,
system fingerprint, finish reason and token alternatives; a content filter; the outcome of one
attempt and how long to wait before the next (``Retry-After``, backoff with jitter) (owns the
reading of replies; ``openai`` sends the requests)."""

from __future__ import annotations

import dataclasses
import email.utils
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from medlens.models.base import ErrorType, ModelError, Request, Response, TokenAlternatives


@dataclass(frozen=True)
class Attempt:
    """The outcome of one HTTP attempt: a final response, or a retryable failure."""

    response: Response | None = None
    error: ModelError | None = None
    retry_after: float | None = None


def retry_after_seconds(headers: httpx.Headers) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, else ``Retry-After`` (s or date)."""
    millis = headers.get("retry-after-ms")
    if millis:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def backoff_delay(attempt: int, base: float, cap: float, retry_after: float | None) -> float:
    """Exponential backoff with jitter (half fixed, half random), never shorter than Retry-After."""
    ceiling = min(cap, base * (2**attempt))
    delay = ceiling / 2 + random.uniform(0.0, ceiling / 2)
    return max(delay, retry_after or 0.0)


def parsed_answer(reply: httpx.Response) -> Attempt:
    """A 200 answer → Response; malformed JSON or no choices are retryable protocol errors."""
    try:
        data = json.loads(reply.content)
        choice = data["choices"][0]
        message = choice["message"]
        if not isinstance(message, dict):
            raise TypeError("message is not an object")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        return retry_attempt("protocol", f"malformed answer from server ({type(exc).__name__})")
    if choice.get("finish_reason") == "content_filter":
        return Attempt(Response(None, error=ModelError("refused_by_api", "content filter")))
    # null content without a refusal is a real (empty) answer, e.g. every token was spent on
    # hidden reasoning: retrying would get the same, and extraction reports it as `empty`.
    text = message_text(message) or ""
    served_model, fingerprint = _served(data)
    return Attempt(
        Response(
            text,
            usage=_usage(data.get("usage")),
            served_model=served_model,
            system_fingerprint=fingerprint,
            finish_reason=_finish_reason(choice),
            answer_positions=answer_positions(choice),
        )
    )


def answer_positions(choice: Mapping[str, Any]) -> tuple[TokenAlternatives, ...] | None:
    """The generated tokens and their top alternatives (``logprobs.content``), if sent.

    Held on the response only until :func:`with_option_probs` maps them to the item.
    """
    from medlens.models.option_logprobs import positions_from_openai

    logprobs = choice.get("logprobs")
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    return tuple(positions_from_openai(content)) or None


def with_option_probs(response: Response, request: Request) -> Response:
    """The answer tokens' alternatives turned into probabilities per option of the item."""
    if response.answer_positions is None:
        return response
    from medlens.models.option_logprobs import option_probabilities_along

    probs = option_probabilities_along(request.item, response.answer_positions)
    return dataclasses.replace(response, option_probs=probs, answer_positions=None)


def retry_attempt(kind: ErrorType, message: str, retry_after: float | None = None) -> Attempt:
    return Attempt(error=ModelError(kind, message), retry_after=retry_after)


def is_content_filter(reply: httpx.Response) -> bool:
    try:
        error = json.loads(reply.content).get("error") or {}
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and error.get("code") == "content_filter"


def message_text(message: Mapping[str, Any]) -> str | None:
    """The assistant text; list-of-parts content is joined; a structured refusal is its text."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    refusal = message.get("refusal")
    return refusal if isinstance(refusal, str) else None


def _finish_reason(choice: Mapping[str, Any]) -> str | None:
    reason = choice.get("finish_reason")
    return reason if isinstance(reason, str) and reason else None


def _served(data: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The served ``model`` and ``system_fingerprint`` of an answer, when they are strings."""
    model, fingerprint = data.get("model"), data.get("system_fingerprint")
    return (
        model if isinstance(model, str) and model else None,
        fingerprint if isinstance(fingerprint, str) and fingerprint else None,
    )


def _usage(raw: Any) -> dict[str, int]:
    if not isinstance(raw, dict):
        return {}
    keys = ("prompt_tokens", "completion_tokens", "total_tokens")
    return {key: int(raw[key]) for key in keys if isinstance(raw.get(key), int)}
