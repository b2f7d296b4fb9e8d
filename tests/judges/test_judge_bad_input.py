"""Bad input to `medlens judge` through the real command line: one line, exit 2, nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app

URL = "http://127.0.0.1:9/v1"
CASES = {
    "unknown protocol": (
        ["--judge", judge_spec(URL), "--protocol", "similarity"],
        "unknown judge protocol",
    ),
    "weights for an unknown dimension": (
        ["--judge", judge_spec(URL), "--protocol", "rubric", "--weights", "speed=2"],
        "no such dimension",
    ),
    "negative weights": (
        ["--judge", judge_spec(URL), "--protocol", "rubric", "--weights", "coherence=-1"],
        "not negative",
    ),
    "judge spec without base_url": (
        ["--judge", "openai:gpt-4o", "--protocol", "rubric"],
        "base_url",
    ),
    "unknown judge backend": (["--judge", "claude:opus", "--protocol", "rubric"], "unknown model"),
    "repeats of a greedy judge": (
        ["--judge", judge_spec(URL), "--protocol", "rubric", "--repeats", "3"],
        "deterministically",
    ),
    "no repeats": (
        ["--judge", judge_spec(URL), "--protocol", "rubric", "--repeats", "0"],
        "--repeats",
    ),
    "unknown scope": (
        ["--judge", judge_spec(URL), "--protocol", "rubric", "--scope", "some"],
        "--scope",
    ),
    "missing rubric file": (
        ["--judge", judge_spec(URL), "--protocol", "file:/nonexistent.toml"],
        "nonexistent.toml",
    ),
    "replay of nothing": (
        ["--judge", "replay:/nonexistent", "--protocol", "rubric"],
        "/nonexistent",
    ),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return finished_run(tmp_path_factory.mktemp("bad"), n_open=4, n_closed=0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2_and_writes_nothing(run: Path, case: str) -> None:
    args, needle = CASES[case]
    before = sorted(p.name for p in run.iterdir())
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "judge", str(run), *args],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    message = proc.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    assert needle in message, message
    assert sorted(p.name for p in run.iterdir()) == before and not (run / "judges").exists()


def test_not_a_run_directory(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["judge", str(tmp_path), "--judge", judge_spec(URL), "--protocol", "rubric"]
    )
    assert result.exit_code == 2 and "not a medlens run directory" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_judge_server_that_rejects_the_key_leaves_no_judge_folder(run: Path) -> None:
    with serve(judge_config(JudgeReplies(), api_key="secret")) as server:
        result = CliRunner().invoke(
            app, ["judge", str(run), "--judge", judge_spec(server.base_url), "--protocol", "rubric"]
        )
    assert result.exit_code == 2 and "rejected the API key" in result.output
    assert not (run / "judges").exists()


def test_run_refuses_a_bad_judge_before_answering(tmp_path: Path) -> None:
    from cli_runs import invoke_run
    from judge_fixtures import write_open_bench

    bench, predictions = write_open_bench(tmp_path / "data", 4)
    result = invoke_run(
        f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "r",
        "--judge", "openai:gpt-4o", "--judge-protocol", "rubric",
    )  # fmt: skip
    assert result.exit_code == 2 and "base_url" in result.output
    assert not (tmp_path / "runs").exists()
