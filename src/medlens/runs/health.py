"""How a run went, beside what it scored: cache use, errors and retries per type, served models.

`results.json` carries this as `"health"`; every report prints :func:`health_lines` of it, so
"answered from the cache", "12% of requests were rate-limited" or "the server's model changed"
are never silent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

Record = Mapping[str, Any]

# How a fault type reads in "x% of requests were …".
FAULT_WORDS = {
    "rate_limit": "rate-limited",
    "timeout": "timed out",
    "server": "server errors",
    "connection": "connection failures",
    "protocol": "malformed answers",
}


def run_health(records: Mapping[str, Record], damaged: Sequence[str] = ()) -> dict[str, Any]:
    """Cache use, errors per type, retries per fault type and served-model changes of a run."""
    errors: Counter[str] = Counter()
    retries: Counter[str] = Counter()
    served: dict[str, int] = {}
    systems: dict[str, int] = {}
    cached = 0
    for record in records.values():
        cached += bool(record.get("cached"))
        error = record.get("error")
        if error:
            errors[str(error.get("type"))] += 1
        for kind, count in (record.get("retries") or {}).items():
            retries[str(kind)] += int(count)
        for key, seen in (("served_model", served), ("system_fingerprint", systems)):
            value = record.get(key)
            if isinstance(value, str):
                seen[value] = seen.get(value, 0) + 1
    requests = len(records) - cached + sum(retries.values())
    return {
        "cached_answers": cached,
        "answers": len(records),
        "errors_by_type": dict(errors.most_common()),
        "requests": requests,
        "retries_by_type": dict(retries.most_common()),
        "served_models": served,
        "system_fingerprints": systems,
        "damaged_lines": list(damaged),
    }


def health_lines(health: Mapping[str, Any] | None) -> list[str]:
    """One line per fact worth a reader's attention (nothing when the run went plainly)."""
    if not health:
        return []
    lines = []
    if health["cached_answers"]:
        lines.append(
            f"cache: {health['cached_answers']} of {health['answers']} answers came from the "
            "response cache (run with --no-cache to ask the model again)"
        )
    errors = health["errors_by_type"]
    if errors:
        detail = ", ".join(f"{kind} {n}" for kind, n in errors.items())
        lines.append(f"errored: {sum(errors.values())} ({detail})")
    retries, requests = health["retries_by_type"], health["requests"]
    if retries and requests:
        shares = [
            f"{100 * n / requests:.0f}% {FAULT_WORDS.get(kind, kind)}"
            for kind, n in retries.items()
        ]
        lines.append(f"faults over {requests} requests (retried): " + ", ".join(shares))
    for key, what in (("served_models", "model"), ("system_fingerprints", "system_fingerprint")):
        values = health.get(key) or {}
        if len(values) > 1:
            listing = ", ".join(f"{v} ({n} answers)" for v, n in values.items())
            lines.append(f"the server-reported {what} changed within this run: {listing}")
    lines.extend(f"damaged record line: {message}" for message in health["damaged_lines"])
    return lines
