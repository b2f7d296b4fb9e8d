"""`medlens report --format text|json` on real runs of small native benchmarks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.cli import app
from medlens.core.items import Item

runner = CliRunner()


@pytest.fixture(scope="module")
def random_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    bench = write_jsonl_benchmark(folder / "bench", n_items=600, n_images=60, seed=9)
    return named_run(f"jsonl:{bench}", "random", folder, "r")


def test_json_report_has_the_documented_shape(random_run: Path) -> None:
    result = runner.invoke(app, ["report", str(random_run), "--format", "json"])
    assert result.exit_code == 0
    data = json.loads(result.output)
    overall = data["overall"]
    assert overall["n"] == 600
    assert overall["ci"][0] <= overall["score"] <= overall["ci"][1]
    assert set(data["rates"]) >= {"unparsed", "refused", "error"}
    for axis in ("department", "granularity", "modality"):
        cells = data["by"][axis]
        assert sum(c["n"] for c in cells.values()) == 600
        assert all(set(c) >= {"n", "score", "ci", "random"} for c in cells.values())


def test_random_model_lands_within_ci_of_its_baseline(random_run: Path) -> None:
    overall = json.loads((random_run / "results.json").read_text())["overall"]
    low, high = overall["ci"]
    assert low <= overall["random"] <= high
    assert 0.15 < overall["random"] < 0.3  # 4–5 options, some multi-answer items


def test_text_report_shows_overall_and_axis_tables(random_run: Path) -> None:
    result = runner.invoke(app, ["report", str(random_run)])
    assert result.exit_code == 0
    for needle in ("overall", "by department", "by granularity", "95% CI", "random", "vlmeval"):
        assert needle in result.output


def test_report_to_file_and_unknown_format(random_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    assert (
        runner.invoke(app, ["report", str(random_run), "-f", "json", "-o", str(out)]).exit_code == 0
    )
    assert json.loads(out.read_text())["overall"]["n"] == 600
    bad = runner.invoke(app, ["report", str(random_run), "-f", "pdf"])
    assert bad.exit_code == 2 and "unknown report format 'pdf'" in bad.output


def test_report_of_a_non_run_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "not a medlens run directory" in result.output


def test_split_without_answers_reports_that_scores_need_the_key(tmp_path: Path) -> None:
    bench = tmp_path / "test.jsonl"
    items = [
        Item(id=str(i), question="Q?", kind="choice", options={"A": "x", "B": "y"})
        for i in range(5)
    ]
    bench.write_text("".join(json.dumps(i.to_json()) + "\n" for i in items))
    result = runner.invoke(
        app, ["run", "--bench", f"jsonl:{bench}", "--model", "first", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    assert "scores need the official answer key" in result.output
    assert "medlens export" in result.output
    data = json.loads((tmp_path / "jsonl-first" / "results.json").read_text())
    assert data["has_answers"] is False and data["overall"]["score"] is None
