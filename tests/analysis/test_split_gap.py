"""`compare` on two runs of one model on two splits (VAL/TEST): an unpaired gap with its
interval, called out beyond 2 points; on real SLAKE validate/test and on planted splits."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from medlens.cli import app


def _compare(a: Path, b: Path) -> dict:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["compare", str(a), str(b), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)["split_gap"]


def test_real_slake_validate_and_test_give_an_unpaired_gap(tmp_path: Path) -> None:
    folder = realdata_dir("slake")
    val = named_run(f"slake:{folder}?split=validate", "first", tmp_path, "val", "--limit", "300")
    test = named_run(f"slake:{folder}?split=test", "first", tmp_path, "test", "--limit", "300")
    gap = _compare(val, test)
    results = [json.loads((run / "results.json").read_text())["overall"] for run in (val, test)]
    assert gap["splits"] == ["validate", "test"]
    assert gap["gap"] == pytest.approx(results[0]["score"] - results[1]["score"])
    z = stats.norm.ppf(0.975)
    se = np.sqrt(sum(((r["ci"][1] - r["ci"][0]) / (2 * z)) ** 2 for r in results))
    assert gap["ci"] == pytest.approx([gap["gap"] - z * se, gap["gap"] + z * se])
    assert (gap["alert"] is not None) == (abs(gap["gap"]) > 0.02)


def _split_file(tmp_path: Path, split: str, right: int) -> str:
    rows = [{"id": f"{split}{n}", "question": f"Q {n}?", "kind": "choice",
             "options": {"A": "x", "B": "y"}, "answer": "A" if n < right else "B",
             "meta": {"split": split}} for n in range(100)]  # fmt: skip
    path = tmp_path / f"{split}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"jsonl:{path}"


def test_a_gap_beyond_two_points_is_called_out(tmp_path: Path) -> None:
    val = named_run(_split_file(tmp_path, "val", 80), "first", tmp_path / "runs", "val")
    test = named_run(_split_file(tmp_path, "test", 70), "first", tmp_path / "runs", "test")
    gap = _compare(val, test)
    assert gap["gap"] == pytest.approx(0.10)
    assert "val/test gap of 10.0 points between two runs of one model" in gap["alert"]
    text = CliRunner().invoke(app, ["compare", str(val), str(test)])
    assert "warning: val/test gap of 10.0 points" in text.output
    close = named_run(_split_file(tmp_path / "runs", "test", 79), "first", tmp_path / "r2", "t")
    assert _compare(val, close)["alert"] is None


def test_an_across_board_calls_out_one_models_split_gap(tmp_path: Path) -> None:
    val = named_run(_split_file(tmp_path, "val", 80), "first", tmp_path / "runs", "val")
    test = named_run(_split_file(tmp_path, "test", 70), "first", tmp_path / "runs", "test")
    board = CliRunner().invoke(app, ["board", str(val), str(test), "--across", "--json"])
    assert board.exit_code == 0, board.output
    gaps = json.loads(board.stdout)["across"]["split_gaps"]
    assert len(gaps) == 1 and gaps[0]["splits"] == ["val", "test"]
    assert gaps[0]["gap"] == pytest.approx(0.10) and "beyond 2 points" in gaps[0]["alert"]
    assert gaps[0]["ci"] == pytest.approx(_compare(val, test)["ci"])
    text = CliRunner().invoke(app, ["board", str(val), str(test), "--across"])
    assert "val − test +10.0 points" in text.output and "beyond 2 points" in text.output
