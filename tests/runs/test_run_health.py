"""Fault accounting: retries per fault type in responses and records, shares in the health lines."""

from __future__ import annotations

from loopback_server import Faults, ServerConfig, gold_by_marker, serve
from medlens.api import load_model
from medlens.core.items import Item
from medlens.models.base import ModelContext
from medlens.runs.health import health_lines, run_health
from model_calls import answer_items


def items(n: int) -> list[Item]:
    return [
        Item(id=f"q{i}", question=f"[[q{i}]] Which?", kind="choice",
             options={"A": "a", "B": "b"}, answer="A")
        for i in range(n)
    ]  # fmt: skip


def test_every_failed_attempt_is_counted_by_type() -> None:
    faults = Faults(rate_limit=0.3, server_error=0.15, malformed=0.05)
    golds = {f"q{i}": "A" for i in range(60)}
    with serve(ServerConfig(gold=gold_by_marker(golds), faults=faults)) as server:
        spec = f"openai:m?base_url={server.base_url}&max_retries=30&backoff=0.001&backoff_max=0.002"
        responses = answer_items(load_model(spec, ModelContext(items=())), items(60))
        stats = dict(server.stats)
    assert all(r.error is None for r in responses)
    totals = {"rate_limit": 0, "server": 0, "protocol": 0}
    for response in responses:
        for kind, count in response.retries.items():
            totals[kind] += count
    # the server's own count of each fault it injected, attempt by attempt
    assert totals == {
        "rate_limit": stats.get("rate_limit", 0),
        "server": stats.get("server_error", 0),
        "protocol": stats.get("malformed", 0),
    }
    assert stats["requests"] == 60 + sum(totals.values())


def test_health_lines_state_shares_of_requests_and_errors_per_type() -> None:
    records = {
        "a": {"id": "a", "error": None, "retries": {"rate_limit": 2, "timeout": 1}},
        "b": {"id": "b", "error": None, "cached": True},
        "c": {"id": "c", "error": {"type": "server", "message": "x"}, "retries": {"server": 3}},
        "d": {"id": "d", "error": {"type": "timeout", "message": "y"}},
        "e": {"id": "e", "error": None, "served_model": "m1"},
        "f": {"id": "f", "error": None, "served_model": "m2"},
    }
    health = run_health(records, ["records.jsonl, line 3: damaged"])
    # 5 fresh answers (b came from the cache) + 6 retries = 11 requests
    assert health["requests"] == 11 and health["cached_answers"] == 1
    assert health_lines(health) == [
        "cache: 1 of 6 answers came from the response cache (run with --no-cache to ask the "
        "model again)",
        "errored: 2 (server 1, timeout 1)",
        "faults over 11 requests (retried): 27% server errors, 18% rate-limited, 9% timed out",
        "retry rate 54.5% (6 of 11 requests were retries) is above 5%: stop and look at the "
        "server before trusting the run's latency, cost or completeness",
        "the server-reported model changed within this run: m1 (1 answers), m2 (1 answers)",
        "damaged record line: records.jsonl, line 3: damaged",
    ]
