"""A tiny randomly initialised `hf:` judge end to end: the local-backend path of a judge stage
(prompt through the chat template, batching, usage, parsing of whatever it says).

Random weights say nothing parseable, so every verdict is unparseable: retried once, left out of
the judged score and counted as a judge error. Nothing is downloaded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("transformers")

from judge_fixtures import finished_run, judgement_lines
from medlens.cli import app
from tiny_hf import build_llava


def test_a_tiny_hf_judge_end_to_end(tmp_path: Path) -> None:
    model = build_llava(tmp_path / "llava")
    run = finished_run(tmp_path, n_open=12, n_closed=0)
    spec = f"hf:{model}?max_new_tokens=8&batch_size=4"
    result = CliRunner().invoke(
        app, ["judge", str(run), "--judge", spec, "--protocol", "equivalence", "--name", "tiny"]
    )
    assert result.exit_code == 0, result.output
    lines = judgement_lines(run / "judges" / "tiny")
    sent = [line for line in lines if line["by"] == "judge"]
    assert len(lines) == 12 and len(sent) == 3  # o0-o8 are exact: settled by the rules
    for line in sent:
        assert isinstance(line["output"], str) and line["fingerprint"]
        assert line["usage"]["prompt_tokens"] > 100 and line["status"] in ("ok", "unparseable")
    report = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    overall = json.loads(report.output)["judges"]["tiny"]["overall"]
    unparseable = sum(line["status"] == "unparseable" for line in sent)
    assert overall["judge_errors"] == unparseable and overall["n"] == 12 - unparseable


def test_a_finished_or_refused_hf_judge_loads_no_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medlens.models.hf as hf

    model = build_llava(tmp_path / "llava")
    run = finished_run(tmp_path, n_open=12, n_closed=0)
    args = ["judge", str(run), "--judge", f"hf:{model}?max_new_tokens=4", "--protocol", "rubric"]
    assert CliRunner().invoke(app, args).exit_code == 0
    before = (run / "judges" / "llava" / "judgements.jsonl").read_bytes()

    def no_loading(settings: object) -> None:
        raise AssertionError("weights loaded although nothing is left to judge")

    monkeypatch.setattr(hf, "load", no_loading)
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    refused = CliRunner().invoke(app, [*args, "--scope", "unresolved"])
    assert refused.exit_code == 2 and "different spec" in refused.output
    assert (run / "judges" / "llava" / "judgements.jsonl").read_bytes() == before


def test_an_hf_judge_that_cannot_load_leaves_nothing(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=12, n_closed=0)
    args = ["judge", str(run), "--judge", f"hf:{tmp_path / 'absent'}", "--protocol", "rubric"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "absent" in result.output, result.output
    assert not (run / "judges").exists()
