"""Run health: a retry rate above 5% of requests is called out during and after the run, and
`run --max-retry-rate` stops a run (resumable) against a real loopback server that rate-limits."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from loopback_server import Faults, ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.runs.health import RetryRateExceeded, RetryWatch, retry_rate_line

FAST_RETRIES = "max_retries=8&backoff=0.001&backoff_max=0.01"
"""Retries as many as before, without the default half-second backoff (the server's own
``retry-after-ms`` still sets the least wait)."""


def _bench(tmp_path: Path, n: int) -> tuple[str, dict[str, str]]:
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(n)}
    lines = [json.dumps({"id": k, "question": f"[[{k}]] Which?", "kind": "choice",
                         "options": {"A": "w", "B": "x", "C": "y", "D": "z"}, "answer": g})
             for k, g in golds.items()]  # fmt: skip
    path = tmp_path / "items.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"jsonl:{path}", golds


def test_the_watch_calls_out_once_above_five_percent_and_stops_above_the_limit() -> None:
    watch = RetryWatch()
    lines = [watch.add({"retries": {"rate_limit": 1} if i % 10 == 0 else {}}) for i in range(40)]
    said = [line for line in lines if line]
    assert len(said) == 1 and "retry rate" in said[0] and "above 5%" in said[0]
    quiet = RetryWatch()
    assert not any(
        quiet.add({"retries": {"rate_limit": 1} if i % 25 == 24 else {}}) for i in range(50)
    )
    strict = RetryWatch(limit=0.05)
    with pytest.raises(RetryRateExceeded, match=r"--max-retry-rate 0\.05"):
        for i in range(40):
            strict.add({"retries": {"server": 1} if i % 5 == 0 else {}})
    assert retry_rate_line(5, 100) is None and retry_rate_line(6, 100) is not None


def test_a_run_with_many_retries_is_called_out_during_and_after(tmp_path: Path) -> None:
    bench, golds = _bench(tmp_path, 40)
    config = ServerConfig(gold=gold_by_marker(golds), faults=Faults(rate_limit=0.3))
    with serve(config) as server:
        model = f"openai:m?base_url={server.base_url}&{FAST_RETRIES}"
        result = invoke_run(bench, model, tmp_path, "r", "--concurrency", "2")
    assert result.exit_code == 0, result.output
    assert "warning: retry rate" in result.output and "stop and look" in result.output
    report = CliRunner().invoke(app, ["report", str(tmp_path / "r"), "--format", "md"])
    assert "retry rate" in report.output and "above 5%" in report.output


def test_max_retry_rate_stops_the_run_and_a_rerun_resumes(tmp_path: Path) -> None:
    bench, golds = _bench(tmp_path, 60)
    config = ServerConfig(gold=gold_by_marker(golds), faults=Faults(rate_limit=0.3))
    with serve(config) as server:
        model = f"openai:m?base_url={server.base_url}&{FAST_RETRIES}"
        stopped = invoke_run(bench, model, tmp_path, "s", "--concurrency", "1",
                             "--max-retry-rate", "0.1")  # fmt: skip
        assert stopped.exit_code == 1, stopped.output
        assert (
            "stopped: retry rate" in stopped.output and "rerun the same command" in stopped.output
        )
        kept = (tmp_path / "s" / "records.jsonl").read_text().splitlines()
        assert 0 < len(kept) < 60
        resumed = invoke_run(bench, model, tmp_path, "s", "--concurrency", "1")
    assert resumed.exit_code == 0, resumed.output
    assert f"resuming: {len(kept)} of 60" in resumed.output


def test_a_bad_max_retry_rate_is_refused(tmp_path: Path) -> None:
    result = invoke_run("demo", "first", tmp_path, "x", "--max-retry-rate", "1.5")
    assert result.exit_code == 2 and "--max-retry-rate 1.5" in result.output
    assert not (tmp_path / "x").exists()
