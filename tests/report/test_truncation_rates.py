"""Truncation and empty answers are never silent (issue 23): records keep the backend's
finish_reason; results, every report and the run summary show the rate of answers cut at the
token cap and of empty answers, overall and per slice, and warn above 1%; the protocol card
states the token cap and how images were sent."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from loopback_server import ChatRequest, LoopbackServer, ServerConfig, serve
from medlens.cli import app

N_ITEMS = 40
"""Items 0–5 are CT and cut at the cap, 6 is CT and empty; 20 CT and 20 MRI in all."""


def _key(request: ChatRequest) -> int:
    found = re.search(r"\[\[(\d+)\]\]", request.text)
    return int(found.group(1)) if found else -1


def _reply(request: ChatRequest) -> str:
    key = _key(request)
    if key < 6:
        return "Let me think step by step about the liver, the"  # cut mid-sentence
    return "" if key == 6 else "yes"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    config = ServerConfig(
        reply=_reply, finish=lambda request: "length" if _key(request) < 6 else "stop"
    )
    with serve(config) as running:
        yield running


def _bench(tmp_path: Path) -> Path:
    rows = [
        {"id": str(n), "question": f"[[{n}]] Is the liver normal?", "kind": "yes_no",
         "answer": "yes", "meta": {"modality": "CT" if n % 2 == 0 or n < 7 else "MRI",
                                   "image_id": f"i{n}"}}
        for n in range(N_ITEMS)
    ]  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_cut_and_empty_answers_are_counted_and_warned(
    tmp_path: Path, server: LoopbackServer
) -> None:
    spec = f"openai:tiny?base_url={server.base_url}&max_tokens=12&max_retries=0"
    result = invoke_run(f"jsonl:{_bench(tmp_path)}", spec, tmp_path / "runs", "cut")
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "cut"
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    reasons = {r["id"]: r["finish_reason"] for r in records}
    assert sum(reason == "length" for reason in reasons.values()) == 6
    results = json.loads((run / "results.json").read_text())
    assert results["rates"]["truncated"] == pytest.approx(6 / N_ITEMS)
    assert results["rates"]["empty"] == pytest.approx(1 / N_ITEMS)
    ct = results["by"]["modality"]["CT"]
    n_ct = sum(1 for n in range(N_ITEMS) if n % 2 == 0 or n < 7)
    assert ct["truncated"] == pytest.approx(6 / n_ct)
    assert results["by"]["modality"]["MRI"]["truncated"] == 0.0
    # the run summary says it, with the cap, and warns
    assert "answers cut at the token cap: 15.0%; empty answers: 2.5%" in result.output
    assert "max tokens 12" in result.output
    assert "warning: 15.0% of answers were cut at the token cap" in result.output
    assert "modality=CT" in result.output
    for fmt in ("text", "md", "html"):
        shown = CliRunner().invoke(app, ["report", str(run), "--format", fmt]).output
        assert "answers cut at the token cap" in shown, fmt
        assert f"by modality: CT cut {100 * 6 / n_ct:.1f}%" in shown.replace("\\", ""), fmt
    card = CliRunner().invoke(app, ["report", str(run)]).output
    assert "max tokens: 12" in card
    assert "images: sent as stored (no resizing, no lossy re-encoding)" in card


def test_baselines_say_the_backend_reports_no_finish_reason(tmp_path: Path) -> None:
    result = invoke_run(f"jsonl:{_bench(tmp_path)}", "oracle", tmp_path / "runs", "oracle")
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "runs" / "oracle" / "results.json").read_text())
    assert results["rates"]["truncated"] is None
    assert "answers cut at the token cap: not reported by this backend" in result.output
    assert "warning" not in result.output
    card = CliRunner().invoke(app, ["report", str(tmp_path / "runs" / "oracle")]).output
    assert "max tokens: not applicable (no generation)" in card
