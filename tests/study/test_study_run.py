"""A study of baselines on the demo benchmark, end to end: ordinary runs under
studies/<study>/runs/<model>--<benchmark>/, study.json, boards named by model label, the index
page; a rerun resumes (and redoes nothing); a changed file is refused listing the differences,
added models and benchmarks are taken up; --only and --dry-run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from medlens.cli import app
from study_fixtures import record_ids, write_study

MODELS = {"rand": "random", "oracle": "oracle", "first": "first"}
BENCHMARKS = {
    "demo": {"spec": "demo", "limit": 30},
    "box": {"spec": "demo", "where": "granularity=box", "limit": 20},
}
BOARDS = [{"benchmark": "demo", "pairs": ["rand:oracle"], "by": ["granularity"]}]


def study(tmp_path: Path, *extra: str, models: dict[str, Any] | None = None,
          benchmarks: dict[str, Any] | None = None, boards: Any = BOARDS) -> Result:  # fmt: skip
    path = write_study(tmp_path / "s.toml", "s", models or MODELS, benchmarks or BENCHMARKS,
                       boards=boards)  # fmt: skip
    return CliRunner().invoke(
        app, ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports", *extra]
    )


def read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_study_makes_ordinary_runs_boards_and_an_index(tmp_path: Path) -> None:
    result = study(tmp_path)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "studies" / "s"
    record = read(folder / "study.json")
    assert list(record["runs"]) == [f"{m}--{b}" for m in MODELS for b in BENCHMARKS]
    assert {r["state"] for r in record["runs"].values()} == {"done"}
    assert record["runs"]["oracle--demo"]["score"] == 1.0
    assert record["file"]["sha256"] and record["identity"]["models"]["rand"] == {"spec": "random"}
    for key in record["runs"]:
        run = folder / "runs" / key
        assert read(run / "run.json")["spec"]["model"].split("?")[0] in MODELS.values()
        assert len(record_ids(run)) == (30 if key.endswith("--demo") else 20)
    # every other command works on a study's run
    report = CliRunner().invoke(
        app, ["report", str(folder / "runs" / "rand--demo"), "--format", "json"]
    )
    assert report.exit_code == 0 and json.loads(report.output)["overall"]["n"] == 30
    board = read(folder / "boards" / "demo.json")
    assert next(m["run"] for m in board["models"]) == "oracle"  # ranked first, named by label
    assert board["pairs"][0]["base"] == "rand" and board["pairs"][0]["tuned"] == "oracle"
    assert "granularity" in board["by"]
    across = read(folder / "boards" / "across.json")["across"]
    assert sorted(across["models"]) == sorted(MODELS) and len(across["cells"]) == 6
    index = (folder / "study.md").read_text(encoding="utf-8")
    assert "[html](boards/demo.html)" in index and "## Models × benchmarks" in index
    assert "| oracle | 100.0% " in index
    html = (folder / "study.html").read_text(encoding="utf-8")
    assert '<a href="boards/across.html">html</a>' in html


def test_rerunning_resumes_and_redoes_nothing(tmp_path: Path) -> None:
    assert study(tmp_path).exit_code == 0
    run = tmp_path / "studies" / "s" / "runs" / "rand--demo"
    before = (run / "records.jsonl").read_bytes()
    again = study(tmp_path)
    assert again.exit_code == 0, again.output
    assert (run / "records.jsonl").read_bytes() == before
    assert "rand--demo" in again.output  # the summary still lists every run


def test_a_changed_file_is_refused_listing_every_difference(tmp_path: Path) -> None:
    assert study(tmp_path).exit_code == 0
    folder = tmp_path / "studies" / "s"
    before = (folder / "study.json").read_bytes()
    changed = {**BENCHMARKS, "box": {"spec": "demo", "where": "granularity=mask", "limit": 20}}
    models = {k: v for k, v in MODELS.items() if k != "first"}
    result = study(tmp_path, models=models, benchmarks=changed)
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert "changed since the study began" in message
    assert "benchmark box: where 'granularity=box' → 'granularity=mask'" in message
    assert "model first was removed" in message
    assert (folder / "study.json").read_bytes() == before


def test_added_models_and_benchmarks_are_taken_up_and_a_limit_may_grow(tmp_path: Path) -> None:
    first_file = {
        "models": {"rand": "random"},
        "benchmarks": {"demo": {"spec": "demo", "limit": 10}},
    }
    assert study(tmp_path, **first_file, boards=[]).exit_code == 0
    folder = tmp_path / "studies" / "s"
    first = (folder / "runs" / "rand--demo" / "records.jsonl").read_bytes()
    result = study(tmp_path, models={"rand": "random", "prior": "prior"},
                   benchmarks={"demo": {"spec": "demo", "limit": 25}, "box": BENCHMARKS["box"]},
                   boards=[])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "added since the study began: model prior" in result.output
    assert "added since the study began: benchmark box" in result.output
    record = read(folder / "study.json")
    assert set(record["runs"]) == {"rand--demo", "rand--box", "prior--demo", "prior--box"}
    ids = record_ids(folder / "runs" / "rand--demo")
    assert len(ids) == 25 and (
        folder / "runs" / "rand--demo" / "records.jsonl"
    ).read_bytes().startswith(first[:50])


def test_only_runs_the_named_models(tmp_path: Path) -> None:
    result = study(tmp_path, "--only", "oracle")
    assert result.exit_code == 0, result.output
    runs = tmp_path / "studies" / "s" / "runs"
    assert sorted(p.name for p in runs.iterdir()) == ["oracle--box", "oracle--demo"]
    record = read(tmp_path / "studies" / "s" / "study.json")
    assert record["runs"]["rand--demo"]["state"] == "pending"
    board = read(tmp_path / "studies" / "s" / "boards" / "demo.json")
    assert [m["run"] for m in board["models"]] == ["oracle"]
    assert "pairs left out (a model has no finished run): rand:oracle" in result.output


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    result = study(tmp_path, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "3 models × 2 benchmarks = 6 runs" in result.output
    assert "run oracle--box" in result.output and "150 model requests" in result.output
    assert "no model was called, nothing was written" in result.output
    assert not (tmp_path / "studies").exists()


def test_a_rerun_of_a_finished_study_touches_no_run_and_calls_no_judge(tmp_path: Path) -> None:
    from judge_fixtures import write_open_bench
    from judge_server import JudgeReplies, judge_config
    from loopback_server import serve
    from study_fixtures import openai_spec

    bench, predictions = write_open_bench(tmp_path / "open", 12, 4)
    with serve(judge_config(JudgeReplies())) as judge:
        path = write_study(
            tmp_path / "j.toml", "j", {"replayed": f"replay:{predictions}"}, {"open": f"jsonl:{bench}"},
            judges={"eq": {"spec": openai_spec(judge.base_url, "judge"), "protocol": "equivalence"}},
        )  # fmt: skip
        args = ["study", str(path), "--out", str(tmp_path / "studies")]
        assert CliRunner().invoke(app, args).exit_code == 0
        run = tmp_path / "studies" / "j" / "runs" / "replayed--open"
        calls = judge.stats["requests"]
        stamps = {name: (run / name).stat().st_mtime_ns for name in ("results.json", "report.html")}
        again = CliRunner().invoke(app, args)
        assert again.exit_code == 0, again.output
        assert judge.stats["requests"] == calls > 0
    assert {name: (run / name).stat().st_mtime_ns for name in stamps} == stamps
    record = read(tmp_path / "studies" / "j" / "study.json")
    assert record["judges"]["replayed--open/eq"]["state"] == "done"
    assert '<a href="runs/replayed--open/report.html">report</a>' in (
        tmp_path / "studies" / "j" / "study.html"
    ).read_text(encoding="utf-8")


def test_a_models_training_cutoff_reaches_its_runs_but_not_their_identity(tmp_path: Path) -> None:
    models = {"first": {"spec": "first", "training_cutoff": "2025-03"}, "rand": "random"}
    result = study(tmp_path, models=models, benchmarks={"demo": {"spec": "demo", "limit": 5}},
                   boards=[])  # fmt: skip
    assert result.exit_code == 0, result.output
    runs = tmp_path / "studies" / "s" / "runs"
    assert read(runs / "first--demo" / "run.json")["model_info"] == {"training_cutoff": "2025-03"}
    assert "model_info" not in read(runs / "rand--demo" / "run.json")
    record = read(tmp_path / "studies" / "s" / "study.json")
    assert record["identity"]["models"]["first"] == {"spec": "first"}
