"""How a run went, beside what it scored: cache use, errors and retries per type, served models.

`results.json` carries this as `"health"`; every report prints :func:`health_lines` of it, so
"answered from the cache", "12% of requests were rate-limited" or "the server's model changed"
are never silent.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from medlens.core.errors import MedlensError

Record = Mapping[str, Any]

# How a fault type reads in "x% of requests were …".
FAULT_WORDS = {
    "rate_limit": "rate-limited",
    "timeout": "timed out",
    "server": "server errors",
    "connection": "connection failures",
    "protocol": "malformed answers",
}


def run_health(
    records: Mapping[str, Record],
    damaged: Sequence[str] = (),
    cache_checks: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Cache use (and how each process checked its cache: ``run.json["cache_checks"]``),
    errors per type, retries per fault type and served-model changes of a run."""
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
    checks = {"cache_checks": [dict(check) for check in cache_checks]} if cache_checks else {}
    return {
        **checks,
        "cached_answers": cached,
        "answers": len(records),
        "errors_by_type": dict(errors.most_common()),
        "requests": requests,
        "retries_by_type": dict(retries.most_common()),
        "served_models": served,
        "system_fingerprints": systems,
        "damaged_lines": list(damaged),
    }


def cache_check_text(checks: Sequence[Mapping[str, Any]]) -> str:
    """How the server's cached answers were checked, for the cache line: ``; checked: 21
    asked live, all agreed`` or ``; NOT CHECKED: …`` when a process could not ask the server."""
    unchecked = [
        c for c in checks if c.get("result") == "not checked" and c.get("answered_from_cache")
    ]
    if unchecked:
        reasons = "; ".join(str(c.get("reason") or "the server did not answer") for c in unchecked)
        served = sum(int(c.get("answered_from_cache") or 0) for c in unchecked)
        return f"; NOT CHECKED against the server for {served} of them ({reasons})"
    agreed = [c for c in checks if c.get("result") == "agreed" and c.get("answered_from_cache")]
    if agreed:
        asked = sum(int(c.get("asked_live") or 0) for c in agreed)
        return f"; checked: {asked} cached answers asked live again, all agreed"
    return ""


RETRY_ALERT = 0.05
"""Retried share of requests above which a run is called out ("stop and look")."""
RETRY_MIN_REQUESTS = 20
"""Requests a run makes before its retry rate is judged during the run (a few early 429s of a
warming server are not a pattern)."""


def retry_rate_line(retried: int, requests: int) -> str | None:
    """The call-out when more than RETRY_ALERT of the requests were retries, else None."""
    if not requests or retried / requests <= RETRY_ALERT:
        return None
    return (
        f"retry rate {100 * retried / requests:.1f}% ({retried} of {requests} requests were "
        f"retries) is above {100 * RETRY_ALERT:.0f}%: stop and look at the server before "
        "trusting the run's latency, cost or completeness"
    )


class RetryWatch:
    """Counts retries as records arrive; says once when the rate passes RETRY_ALERT, and
    raises :class:`RetryRateExceeded` above `limit` (``run --max-retry-rate``)."""

    def __init__(self, limit: float | None = None) -> None:
        self.limit = limit
        self.requests = 0
        self.retried = 0
        self.warned = False

    def add(self, record: Record) -> str | None:
        """Count one record; the call-out the first time the rate passes the alert level."""
        retried = sum(int(n) for n in (record.get("retries") or {}).values())
        self.retried += retried
        self.requests += retried + (0 if record.get("cached") else 1)
        if self.requests < RETRY_MIN_REQUESTS:
            return None
        rate = self.retried / self.requests
        if self.limit is not None and rate > self.limit:
            raise RetryRateExceeded(
                f"stopped: retry rate {100 * rate:.1f}% ({self.retried} of {self.requests} "
                f"requests) is above --max-retry-rate {self.limit:g}; the answers so far are "
                "kept: rerun the same command to resume"
            )
        line = None if self.warned else retry_rate_line(self.retried, self.requests)
        self.warned = self.warned or line is not None
        return line


class RetryRateExceeded(MedlensError):
    """A run stopped because its requests were retried more than ``--max-retry-rate``."""


def health_lines(health: Mapping[str, Any] | None) -> list[str]:
    """One line per fact worth a reader's attention (nothing when the run went plainly)."""
    if not health:
        return []
    lines = []
    if health["cached_answers"]:
        lines.append(
            f"cache: {health['cached_answers']} of {health['answers']} answers came from the "
            "response cache (run with --no-cache to ask the model again)"
            + cache_check_text(health.get("cache_checks") or [])
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
        alert = retry_rate_line(sum(retries.values()), requests)
        lines += [alert] if alert else []
    for key, what in (("served_models", "model"), ("system_fingerprints", "system_fingerprint")):
        values = health.get(key) or {}
        if len(values) > 1:
            listing = ", ".join(f"{v} ({n} answers)" for v, n in values.items())
            lines.append(f"the server-reported {what} changed within this run: {listing}")
    lines.extend(f"damaged record line: {message}" for message in health["damaged_lines"])
    return lines
