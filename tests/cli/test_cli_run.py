"""`medlens run` end to end: through typer's runner and through real subprocesses."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import invoke_run, named_run
from medlens.cli import app

runner = CliRunner()


def records(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def medlens(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "medlens", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_jsonl_benchmark(tmp_path_factory.mktemp("bench"), n_items=400)


def test_oracle_reaches_100_percent(bench: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["run", "--bench", f"jsonl:{bench}", "--model", "oracle", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    results = json.loads((tmp_path / "jsonl-oracle" / "results.json").read_text())
    assert results["overall"]["n"] == 400
    assert results["overall"]["score"] == 1.0
    assert set(results["by"]) >= {"department", "granularity", "modality"}


def test_rerun_resumes_without_model_calls(bench: Path, tmp_path: Path) -> None:
    args = [
        "run",
        "--bench",
        f"jsonl:{bench}",
        "--model",
        "random",
        "--out",
        str(tmp_path),
        "--limit",
        "100",
    ]
    assert runner.invoke(app, args).exit_code == 0
    assert len(records(tmp_path / "jsonl-random")) == 100
    full = runner.invoke(app, args[:-2])
    assert full.exit_code == 0, full.output
    assert "resuming: 100 of 400" in full.output
    ids = [r["id"] for r in records(tmp_path / "jsonl-random")]
    assert len(ids) == len(set(ids)) == 400


def test_changed_spec_is_refused_with_exit_2(bench: Path, tmp_path: Path) -> None:
    named_run(f"jsonl:{bench}", "first", tmp_path, "x", "--limit", "5")
    result = invoke_run(f"jsonl:{bench}", "first", tmp_path, "x", "--prompt", "vlmeval")
    assert result.exit_code == 2
    assert 'prompt: "medlens" → "vlmeval"' in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--bench", "nosuch:x", "--model", "random"], "unknown benchmark 'nosuch'"),
        (["--bench", "demo", "--model", "oracel"], "did you mean 'oracle'"),
        (["--bench", "jsonl:/does/not/exist.jsonl", "--model", "random"], "/does/not/exist.jsonl"),
        (["--bench", "demo", "--model", "random", "--prompt", "fancy"], "--prompt 'fancy'"),
    ],
)
def test_bad_input_exits_2_without_run_directory(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = runner.invoke(app, ["run", *args, "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert not (tmp_path / "runs").exists()


def test_subprocess_error_is_one_line_without_traceback(tmp_path: Path) -> None:
    proc = medlens(
        "run",
        "--bench",
        f"jsonl:{tmp_path}/missing.jsonl",
        "--model",
        "random",
        "--out",
        str(tmp_path),
    )
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert err.startswith("medlens: error:")


def wait_for_records(path: Path, at_least: int, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if path.is_file() and path.read_bytes().count(b"\n") >= at_least:
            return
        time.sleep(0.002)


def test_sigkill_at_random_moments_loses_nothing(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "b", n_items=1500, seed=3)
    spec = ["--bench", f"jsonl:{bench}", "--model", "random?seed=5", "--concurrency", "1"]
    reference = medlens("run", *spec, "--out", str(tmp_path), "--name", "ref")
    reference.communicate(timeout=120)
    assert reference.returncode == 0
    rng = random.Random(11)
    killed = tmp_path / "killed"
    for _ in range(4):
        proc = medlens("run", *spec, "--out", str(tmp_path), "--name", "killed")
        wait_for_records(killed / "records.jsonl", rng.randrange(1, 1400), proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    final = medlens("run", *spec, "--out", str(tmp_path), "--name", "killed")
    final.communicate(timeout=120)
    assert final.returncode == 0
    got = {r["id"]: r["score"] for r in records(killed)}
    assert len(records(killed)) == len(got) == 1500
    assert got == {r["id"]: r["score"] for r in records(tmp_path / "ref")}


def test_sigint_exits_130_and_resumes(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "b", n_items=3000, seed=4)
    spec = [
        "--bench",
        f"jsonl:{bench}",
        "--model",
        "first",
        "--concurrency",
        "1",
        "--out",
        str(tmp_path),
    ]
    proc = medlens("run", *spec)
    wait_for_records(tmp_path / "jsonl-first" / "records.jsonl", 50, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "rerun the same command to resume" in err
    again = medlens("run", *spec)
    again.communicate(timeout=120)
    assert again.returncode == 0
    assert len(records(tmp_path / "jsonl-first")) == 3000
