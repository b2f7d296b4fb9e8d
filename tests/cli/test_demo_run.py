"""The embedded demo end to end: what `make demo` runs, plus the oracle and random checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlens.cli import app

runner = CliRunner()


def run_demo(model: str, out: Path, *extra: str) -> dict[str, object]:
    result = runner.invoke(
        app, ["run", "--bench", "demo", "--model", model, "--out", str(out), *extra]
    )
    assert result.exit_code == 0, result.output
    name = f"demo-{model.split('?')[0]}"
    results: dict[str, object] = json.loads((out / name / "results.json").read_text())
    return results


def test_oracle_scores_100_percent_on_every_axis(tmp_path: Path) -> None:
    results = run_demo("oracle", tmp_path)
    assert results["overall"]["score"] == 1.0  # type: ignore[index]
    assert results["overall"]["n"] >= 150  # type: ignore[index]
    for axis in ("granularity", "modality", "task", "department"):
        cells = results["by"][axis]  # type: ignore[index]
        assert all(c["score"] == 1.0 for c in cells.values()), axis
    assert set(results["by"]["granularity"]) == {"image", "box", "mask", "contour"}  # type: ignore[index]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_lands_within_its_ci_of_the_chance_level(tmp_path: Path, seed: int) -> None:
    overall = run_demo(f"random?seed={seed}", tmp_path)["overall"]
    low, high = overall["ci"]  # type: ignore[index]
    assert low <= overall["random"] <= high  # type: ignore[index,operator]


def test_make_demo_command_ends_with_the_summary_table(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", "demo", "--model", "random"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "by granularity" in proc.stdout and "overall" in proc.stdout
    assert "items/s" in proc.stderr  # the progress bar
    assert (tmp_path / "runs" / "demo-random" / "records.jsonl").is_file()
