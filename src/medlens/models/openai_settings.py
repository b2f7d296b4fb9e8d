"""The options of an `openai:` spec, checked once into the settings every request of the backend uses."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.specs import NUMBER_KINDS, Spec, check_options

# Options that change only how requests travel, not what is asked: kept out of Model.spec (and so
# out of the fingerprint and the run spec), so a run resumed with a longer timeout, or against the
# same server moved to another host or port, is the same run. The served model id that each record
# stores is the identity check.
TRANSPORT_OPTIONS = frozenset(
    {
        "base_url",
        "connect_timeout",
        "read_timeout",
        "max_retries",
        "backoff",
        "backoff_max",
        "max_connections",
    }
)


def without_transport(spec: Spec) -> Spec:
    """The spec with its transport options left out: what names the model, not the road."""
    public = {key: value for key, value in spec.options.items() if key not in TRANSPORT_OPTIONS}
    return Spec(spec.name, spec.argument, public)


REQUEST_OPTIONS = frozenset(
    {
        "api_key_env",
        "max_tokens",
        "temperature",
        "seed",
        "system",
        "image_detail",
        "extra_body",
        "top_p",
        "logprobs",
        "top_logprobs",
    }
)


@dataclass(frozen=True)
class OpenAISettings:
    """The parsed ``openai:`` spec."""

    model: str
    base_url: str
    api_key_env: str
    body_defaults: Mapping[str, Any]
    """Fields sent with every request: temperature, max_tokens, seed, extra body fields."""
    system: str | None
    image_detail: str | None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 6
    backoff: float = 0.5
    """Delay before the first retry, doubled per attempt (with jitter) up to ``backoff_max``."""
    backoff_max: float = 30.0
    max_connections: int = 0
    """0 = size the connection pool to the run's concurrency."""


MAX_RETRIES = 50
"""More retries than this only delays the error: at the default 30 s backoff cap, 50 retries
already wait about 25 minutes for one item."""

NUMBER_CEILINGS = {
    "max_retries": MAX_RETRIES,
    "connect_timeout": 3600.0,
    "read_timeout": 86400.0,
    "backoff": 600.0,
    "backoff_max": 3600.0,
}
"""The largest value each transport option takes (a typo such as ``max_retries=100000`` is
refused instead of retrying a dead item for days)."""

# The request body's fields that medlens writes itself: extra_body may not replace them, or the
# run card and `show` would describe a request that was never sent.
MEDLENS_BODY_KEYS = frozenset({"model", "messages", "stream", "n", "logprobs", "top_logprobs"})
OPTION_BODY_KEYS = ("temperature", "seed", "max_tokens", "top_p")
"""Fields an option sets; extra_body may carry one only when the option is not given too."""


def _number(spec: Spec, key: str, kind: type, default: Any, low: float = 0.0) -> Any:
    raw = spec.option(key)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise SpecError(f"openai: option {key}={raw!r} is not a {NUMBER_KINDS[kind]}") from None
    if not math.isfinite(value):
        raise SpecError(f"openai: option {key}={raw!r} is not a finite number")
    if value < low:
        raise SpecError(f"openai: option {key}={raw!r} must be at least {low:g}")
    high = NUMBER_CEILINGS.get(key)
    if high is not None and value > high:
        raise SpecError(f"openai: option {key}={raw!r} must be at most {high:g}")
    return value


def _non_finite_path(value: Any, path: str) -> str | None:
    """Where in a JSON value a NaN or an infinity sits (JSON has neither), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return path
    children: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        children = [(f"{path}.{key}", item) for key, item in value.items()]
    elif isinstance(value, list):
        children = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    for where, item in children:
        found = _non_finite_path(item, where)
        if found:
            return found
    return None


def _extra_body(spec: Spec) -> dict[str, Any]:
    raw = spec.option("extra_body")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise SpecError(f"openai: option extra_body is not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise SpecError("openai: option extra_body must be a JSON object")
    owned = sorted(MEDLENS_BODY_KEYS & set(value))
    if owned:
        raise SpecError(
            f"openai: option extra_body sets {', '.join(owned)}, which medlens writes itself "
            "(the model is the spec's name, the messages come from the prompt; use the "
            "logprobs=true option for log-probabilities)"
        )
    twice = [key for key in OPTION_BODY_KEYS if key in value and spec.option(key)]
    if twice:
        raise SpecError(
            f"openai: {twice[0]} is given twice, as an option and inside extra_body; give it once"
        )
    for key in OPTION_BODY_KEYS:
        if key in value and (
            isinstance(value[key], bool) or not isinstance(value[key], int | float)
        ):
            raise SpecError(f"openai: option extra_body.{key}={value[key]!r} is not a number")
    bad = _non_finite_path(value, "extra_body")
    if bad:
        raise SpecError(
            f"openai: option {bad} is not a finite number (JSON has no NaN or Infinity)"
        )
    return value


def _logprob_options(spec: Spec) -> dict[str, Any]:
    """``logprobs=true&top_logprobs=K`` (K in 1..20): per-option probabilities for AUROC."""
    raw = (spec.option("logprobs") or "").lower()
    if raw not in ("", "true", "false", "1", "0"):
        raise SpecError(f"openai: option logprobs={raw!r} must be true or false")
    if raw not in ("true", "1"):
        if spec.option("top_logprobs"):
            raise SpecError("openai: option top_logprobs needs logprobs=true")
        return {}
    top = _number(spec, "top_logprobs", int, 5, 1)
    if top > 20:
        raise SpecError(f"openai: option top_logprobs={top} must be at most 20")
    return {"logprobs": True, "top_logprobs": top}


def parse_settings(spec: Spec, params: Mapping[str, Any]) -> OpenAISettings:
    """Validate the spec's options; run-level `params` fill what the spec leaves open."""
    if "api_key" in spec.options:
        raise SpecError(
            "openai: never put the API key in the spec; export it and name the variable with "
            "api_key_env=VAR"
        )
    check_options(spec, set(REQUEST_OPTIONS | TRANSPORT_OPTIONS))
    if not spec.argument:
        raise SpecError("openai: name the model, e.g. openai:gpt-4o?base_url=http://host/v1")
    body: dict[str, Any] = {"temperature": 0.0}
    for key in ("max_tokens", "temperature", "seed", "top_p"):
        if key in params:
            body[key] = params[key]
            if _non_finite_path(params[key], key):
                raise SpecError(f"openai: {key}={params[key]!r} is not a finite number")
    body["temperature"] = _number(spec, "temperature", float, body["temperature"])
    for key, kind in (("max_tokens", int), ("seed", int), ("top_p", float)):
        value = _number(spec, key, kind, body.get(key))
        if value is not None:
            body[key] = value
    body.update(_logprob_options(spec))
    body.update(_extra_body(spec))
    detail = spec.option("image_detail") or None
    if detail not in (None, "auto", "low", "high"):
        raise SpecError(f"openai: option image_detail={detail!r} must be auto, low or high")
    if not spec.option("base_url"):
        # No default: medical images must never leave for a public endpoint by omission.
        raise SpecError(
            "openai: give the server explicitly with base_url=URL (a local server, e.g. "
            "base_url=http://127.0.0.1:8000/v1, or a hosted API written out, e.g. "
            "base_url=https://api.openai.com/v1)"
        )
    base_url = str(spec.option("base_url")).rstrip("/")
    if not re.match(r"https?://[^/?#\s]+", base_url):
        raise SpecError(
            f"openai: option base_url={base_url!r} is not an http:// or https:// URL "
            "(e.g. base_url=http://127.0.0.1:8000/v1)"
        )
    key_env = spec.option("api_key_env")
    if key_env and not os.environ.get(key_env):
        # Named on purpose, so a missing key is a mistake (leave api_key_env out for no key).
        raise SpecError(
            f"openai: api_key_env={key_env}: environment variable ${key_env} is not set"
        )
    return OpenAISettings(
        model=spec.argument,
        base_url=base_url,
        api_key_env=key_env or "OPENAI_API_KEY",
        body_defaults=body,
        system=spec.option("system") or None,
        image_detail=detail,
        connect_timeout=_number(spec, "connect_timeout", float, 10.0, 0.001),
        read_timeout=_number(spec, "read_timeout", float, 120.0, 0.001),
        max_retries=_number(spec, "max_retries", int, 6),
        backoff=_number(spec, "backoff", float, 0.5),
        backoff_max=_number(spec, "backoff_max", float, 30.0),
        max_connections=_number(spec, "max_connections", int, 0),
    )
