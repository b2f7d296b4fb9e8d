"""The openai: backend's guards: a dead endpoint stops the run, bounded knobs, the request is
what the card says (extra_body cannot replace medlens's fields), JSON never carries NaN."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from urllib.parse import quote

import pytest
from test_openai import item, write_benchmark

from cli_runs import invoke_run
from loopback_server import Faults, ServerConfig, gold_by_marker, serve
from medlens.api import load_model
from medlens.core.errors import SpecError
from medlens.models.base import ModelContext
from medlens.models.endpoint_breaker import (
    DEAD_ENDPOINT_ATTEMPTS,
    ConnectBreaker,
    EndpointUnreachableError,
)
from medlens.models.openai import OpenAIChatModel
from model_calls import answer_items

FAST = "connect_timeout=2&read_timeout=2&backoff=0.001&backoff_max=0.01"


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_dead_endpoint_stops_the_run_with_one_line_naming_it(tmp_path: Path) -> None:
    bench, _ = write_benchmark(tmp_path / "bench", 200)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    spec = f"openai:m?base_url={url}&{FAST}"
    result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", "dead", "--concurrency", "1")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("medlens: error")]
    assert len(lines) == 1 and f"cannot connect to {url}" in lines[0], result.output
    assert f"first {DEAD_ENDPOINT_ATTEMPTS} attempts" in lines[0]
    assert "Traceback" not in result.output
    assert not (tmp_path / "runs").exists()  # nothing was answered, so no run is left behind


def test_breaker_stands_down_once_the_server_answered() -> None:
    breaker = ConnectBreaker("http://h/v1", limit=2)
    breaker.failed_to_connect("refused")
    with pytest.raises(EndpointUnreachableError, match="http://h/v1"):
        breaker.failed_to_connect("refused")
    alive = ConnectBreaker("http://h/v1", limit=2)
    alive.answered()
    for _ in range(10):
        alive.failed_to_connect("refused")  # a live server's hiccup is the item's retry, no stop


def test_a_flaky_but_live_server_is_not_a_dead_endpoint() -> None:
    """Dropped connections of a server that answers are retried, never a stop."""
    with serve(ServerConfig(gold=gold_by_marker({"q1": "A"}), faults=Faults(dropped=1.0))) as live:
        backend = load_model(
            f"openai:m?base_url={live.base_url}&max_retries=7&{FAST}", ModelContext(items=())
        )
        assert isinstance(backend, OpenAIChatModel)
        [response] = answer_items(backend, [item("q1", "A")])
    assert response.error is not None and response.error.type == "connection"


def test_errors_show_on_the_progress_bar(tmp_path: Path) -> None:
    bench, golds = write_benchmark(tmp_path / "bench", 6)
    config = ServerConfig(gold=gold_by_marker(golds), faults=Faults(server_error=1.0))
    with serve(config) as running:
        spec = f"openai:m?base_url={running.base_url}&max_retries=0&{FAST}"
        result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", "bar")
    assert result.exit_code == 1, result.output
    assert "evaluating (6 errors: 6 server)" in result.output


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("max_retries=100000", "max_retries='100000' must be at most 50"),
        ("read_timeout=1e9", "read_timeout='1e9' must be at most"),
        ("temperature=nan", "temperature='nan' is not a finite number"),
        ("temperature=inf", "temperature='inf' is not a finite number"),
        ("top_p=-inf", "top_p='-inf' is not a finite number"),
        ("backoff=nan", "backoff='nan' is not a finite number"),
        ('extra_body={"messages":[]}', "extra_body sets messages, which medlens writes itself"),
        ('extra_body={"model":"other","stream":true}', "extra_body sets model, stream"),
        ('extra_body={"n":3}', "extra_body sets n"),
        ('temperature=0.2&extra_body={"temperature":0.9}', "temperature is given twice"),
        ('seed=1&extra_body={"seed":2}', "seed is given twice"),
        ('extra_body={"temperature":"hot"}', "extra_body.temperature='hot' is not a number"),
        ('extra_body={"top_k":NaN}', r"extra_body.top_k is not a finite number"),
        ('extra_body={"a":{"b":[1,Infinity]}}', r"extra_body.a.b\[1\] is not a finite number"),
        ('extra_body={"penalty":1e999}', r"extra_body.penalty is not a finite number"),
    ],
)
def test_absurd_or_conflicting_options_are_refused_in_one_line(options: str, message: str) -> None:
    head, _, extra = options.partition("extra_body=")
    text = head + (f"extra_body={quote(extra)}" if extra else "")
    with pytest.raises(SpecError, match=message):
        load_model(f"openai:m?base_url=http://127.0.0.1:9/v1&{text}", ModelContext(items=()))


def test_non_finite_run_parameters_are_refused() -> None:
    with pytest.raises(SpecError, match="temperature=nan is not a finite number"):
        load_model(
            "openai:m?base_url=http://127.0.0.1:9/v1",
            ModelContext(items=(), params={"temperature": float("nan")}),
        )


def test_extra_body_given_once_is_sent_and_is_what_the_card_shows() -> None:
    extra = json.dumps({"temperature": 0.6, "top_k": 20})
    with serve(ServerConfig(gold=gold_by_marker({"q1": "A"}))) as running:
        backend = load_model(
            f"openai:m?base_url={running.base_url}&extra_body={quote(extra)}&{FAST}",
            ModelContext(items=()),
        )
        assert isinstance(backend, OpenAIChatModel)
        assert backend.generation["temperature"] == 0.6 and not backend.deterministic
        [response] = answer_items(backend, [item("q1", "A")])
        body = running.last_body
    assert response.text == "A" and body is not None
    assert body["temperature"] == 0.6 and body["top_k"] == 20 and body["model"] == "m"
    asyncio.run(backend.aclose())
