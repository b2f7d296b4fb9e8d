"""The one protocol every model backend implements, and the request/response records."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from medlens.core.items import Item

ErrorType = Literal[
    "timeout", "rate_limit", "server", "connection", "protocol", "refused_by_api", "image", "input"
]


@dataclass(frozen=True)
class TextPart:
    text: str


@dataclass(frozen=True)
class ImagePart:
    """An image already read for this request (at most `concurrency` of these exist at once)."""

    data: bytes = field(repr=False)
    """Encoded image bytes, exactly as stored in the benchmark (never re-encoded lossy)."""
    sha256: str
    name: str = ""


Part = TextPart | ImagePart


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Request:
    """Everything a backend needs to answer one item."""

    item: Item
    """The item itself; baselines (oracle, prior) read its gold answer, real backends must not."""
    messages: tuple[Message, ...]
    params: Mapping[str, Any]
    """Generation parameters (max_tokens, temperature, seed, …) as part of the fingerprint."""
    fingerprint: str
    """sha256 of canonical JSON: model spec without secrets, messages (image sha256s), params."""


@dataclass(frozen=True)
class ModelError:
    type: ErrorType
    message: str


TokenAlternatives = tuple[str, Mapping[str, float]]
"""One generated token and its top alternatives (token text → log-probability)."""


@dataclass(frozen=True)
class Response:
    text: str | None
    error: ModelError | None = None
    usage: Mapping[str, int] = field(default_factory=dict)
    """Token counts: prompt_tokens, completion_tokens, total_tokens when the backend reports them."""
    option_probs: Mapping[str, float] | None = None
    """Probability per option letter when the backend can score options (for AUROC)."""
    latency: float = 0.0
    cached: bool = False
    """True when the response came from the response cache rather than the backend."""
    served_model: str | None = None
    """The model id the server says answered (OpenAI ``model``): the identity check of a run."""
    system_fingerprint: str | None = None
    """The server's configuration fingerprint (OpenAI ``system_fingerprint``), when it sends one."""
    retries: Mapping[str, int] = field(default_factory=dict)
    """Failed attempts before this response, per fault type (``rate_limit``, ``timeout``, …)."""
    finish_reason: str | None = None
    """Why generation stopped, as the backend says it: ``stop``, ``length`` (cut at the token
    cap), ``content_filter`` …; None when the backend does not say (baselines, replays)."""
    answer_positions: tuple[TokenAlternatives, ...] | None = field(default=None, repr=False)
    """The generated tokens with their top alternatives (token → log-probability), held only
    until the backend maps them to ``option_probs`` (``option_logprobs``); never recorded."""
    cache_key: str | None = None
    """The response-cache entry this answer was stored under or read from (None: no cache)."""
    listed_model: Mapping[str, Any] | None = field(default=None, repr=False)
    """A cached answer's server ``/v1/models`` entry when it was written (its stable fields):
    the cache's identity check; None when not known."""
    manual: Mapping[str, str] | None = None
    """``{"entered_by", "note"}`` when a person entered this answer (``execution.manual``)."""


class Model(Protocol):
    """A backend: one async method that answers one request."""

    spec: str
    """Canonical model spec without secrets; part of every request fingerprint."""
    deterministic: bool
    """True when the same request always gives the same answer (greedy or seeded): cacheable."""
    # Optional, read with getattr: ``cache_identity`` (str) names *who* answers beyond the spec
    # (an endpoint, a weights hash) and joins the response-cache key; ``reports_served_model``
    # (bool) says the answers carry the server's model id, and the cache checks its hits live
    # (``execution.cache_check``); ``listed_model`` (async, → dict | None) is the server's
    # ``/v1/models`` entry of the model, compared with the one each cache entry was written under.

    async def generate(self, request: Request) -> Response: ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ModelContext:
    """What a backend factory may know about the run it serves."""

    items: Sequence[Item]
    """The benchmark's items (baselines such as `prior` look at the gold answers)."""
    seed: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)
    """Generation parameters given on the command line."""
    concurrency: int = 0
    """Requests the runner keeps in flight (0: unknown); backends size connection pools to it."""
    describe_only: bool = False
    """The caller needs only `Model.spec` (the Ray driver, whose workers build their own backend):
    backends that load weights skip loading them."""
