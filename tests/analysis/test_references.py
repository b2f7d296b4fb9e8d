"""Published reference tables and `medlens calibrate`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats

from cli_runs import named_run
from medlens.analysis.references import REFERENCE_NAMES, calibrate, find_reference, load_references
from medlens.core.errors import SpecError
from provenance_fixture import write_choice_benchmark, write_gmai_choice_tsv, write_replay


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_every_table_loads_with_scores_in_unit_interval_and_a_source(name: str) -> None:
    rows = load_references(name)
    assert rows
    for row in rows:
        assert {"model", "score", "split", "source"} <= set(row)
        assert 0.0 <= row["score"] <= 1.0
        assert row["source"]


def test_gmai_rows_are_the_published_leaderboard() -> None:
    val = {row["model"]: row["score"] for row in load_references("gmai-val")}
    test = {row["model"]: row["score"] for row in load_references("gmai-test")}
    assert val["GPT-4o"] == pytest.approx(0.5353) and test["GPT-4o"] == pytest.approx(0.5396)
    # the README leaderboard lists Random as 25.70 (VAL) and 25.94 (TEST)
    assert val["Random"] == pytest.approx(0.2570) and test["Random"] == pytest.approx(0.2594)
    assert len(val) == len(test) == 30


def test_unknown_reference_lists_the_known_names() -> None:
    with pytest.raises(SpecError, match="known: gmai-val, gmai-test, medcmr, mmbu"):
        load_references("gmai")


def test_model_with_two_rows_needs_a_split() -> None:
    with pytest.raises(SpecError, match="mcq-all, open-all"):
        find_reference("medcmr", "GPT-5")
    assert find_reference("medcmr", "gpt-5", "mcq-all")["score"] == pytest.approx(0.5781)


def _run(tmp_path: Path, n: int, correct: int) -> Path:
    bench = write_gmai_choice_tsv(tmp_path / "data", n)
    replay = write_replay(tmp_path / "data", n, correct)
    return named_run(f"gmai:{bench}", f"replay:{replay}", tmp_path / "runs", "r")


def test_published_scores_of_another_benchmark_are_refused(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 10)
    replay = write_replay(tmp_path / "data", 10, 5)
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "j")
    with pytest.raises(SpecError, match="not be comparable"):
        calibrate(run, "gmai-val", "GPT-4o")


def test_calibrate_reproduces_within_the_reported_interval(tmp_path: Path) -> None:
    run = _run(tmp_path, 100, 54)
    result = calibrate(run, "gmai-val", "GPT-4o")
    # The interval every medlens report prints for independent 0/1 scores: Wilson with
    # continuity correction (issue 11), as scipy computes it.
    lo, hi = stats.binomtest(54, 100).proportion_ci(method="wilsoncc")
    assert result["run_score"]["ci"] == pytest.approx([lo, hi])
    assert result["difference"] == pytest.approx(0.54 - 0.5353)
    assert result["difference_ci"] == pytest.approx([lo - 0.5353, hi - 0.5353])
    assert result["reproduces"] is True
    far = calibrate(run, "gmai-val", "random")
    assert far["reproduces"] is False and far["difference"] == pytest.approx(0.54 - 0.2570)


def test_calibrate_a_medcmr_row_scores_only_its_slice(tmp_path: Path) -> None:
    """Med-CMR's "MCQ All" row is the closed items of a Med-CMR run."""
    data = tmp_path / "data"
    data.mkdir()
    options = {"A": "a", "B": "b", "C": "c", "D": "d", "E": "e"}
    lines = [json.dumps({"id": str(i), "question": f"Which finding {i}?", "options": options,
                         "answer": "A", "dimension": "SOD"}) for i in range(20)]  # fmt: skip
    (data / "medcmr.jsonl").write_text("\n".join(lines) + "\n")
    replay = write_replay(data, 20, 12)
    run = named_run(f"medcmr:{data / 'medcmr.jsonl'}", f"replay:{replay}", tmp_path / "runs", "m")
    result = calibrate(run, "medcmr", "GPT-5", "mcq-all")
    assert result["run_score"]["n"] == 20 and result["run_score"]["score"] == pytest.approx(0.6)
    assert result["difference"] == pytest.approx(0.6 - 0.5781)


def test_calibrate_cli_json_and_bad_reference(tmp_path: Path) -> None:
    run = _run(tmp_path, 100, 54)
    command = [sys.executable, "-m", "medlens", "calibrate", str(run), "--reference"]
    ok = subprocess.run(
        [*command, "gmai-test", "--as", "GPT-4o", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    data = json.loads(ok.stdout)
    assert data["reproduces"] is True and data["reference"]["score"] == pytest.approx(0.5396)
    bad = subprocess.run(
        [*command, "nope", "--as", "GPT-4o"], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "medlens: error: --reference 'nope': unknown reference "
        "(known: gmai-val, gmai-test, medcmr, mmbu)"
    ]
