"""`medlens export --format every-eval-ever`: runs and boards in the Every Eval Ever schema,
validated against the vendored published schema (0.3.0), fields mapped as documented, errors
and unparsed answers shown where the schema has room for them."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from judge_fixtures import finished_run, judge_spec
from judge_server import JudgeReplies, judge_config
from loopback_server import ChatRequest, HTTPFault, ServerConfig, serve
from medlens.cli import app
from medlens.core.errors import MedlensError
from medlens.report.eee import SCHEMA_DIR, SCHEMA_VERSION, interval_method, validate_files
from medlens.report.export_file import ExportFile

UUID4 = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
SCHEMAS = {
    name: Draft7Validator(json.loads((SCHEMA_DIR / name).read_text()))
    for name in ("eval.schema.json", "instance_level_eval.schema.json")
}


def export(*args: str) -> str:
    result = CliRunner().invoke(app, ["export", *args, "--format", "every-eval-ever"])
    assert result.exit_code == 0, result.output
    return result.output


def logs(folder: Path) -> list[tuple[dict[str, Any], list[dict[str, Any]], Path]]:
    """(aggregate, sample lines, aggregate path) of every log under `folder`, each checked
    against the vendored schemas independently of medlens's own check."""
    out = []
    for path in sorted(folder.rglob("*.json")):
        log = json.loads(path.read_text())
        assert not list(SCHEMAS["eval.schema.json"].iter_errors(log))
        samples = path.with_name(path.stem + "_samples.jsonl")
        lines = [json.loads(line) for line in samples.read_text().splitlines()]
        for line in lines:
            assert not list(SCHEMAS["instance_level_eval.schema.json"].iter_errors(line))
        out.append((log, lines, path))
    return out


def results_of(run: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    value: dict[str, Any] = json.loads(result.output)
    return value


def test_a_run_exports_valid_files_whose_fields_map_as_documented(tmp_path: Path) -> None:
    run = named_run("demo", "random", tmp_path / "runs", "r1")
    export(str(run))
    [(log, lines, path)] = logs(run / "export")
    assert re.fullmatch(rf"data/demo/medlens/random-baseline/{UUID4}\.json",
                        path.relative_to(run / "export").as_posix())  # fmt: skip
    assert log["schema_version"] == SCHEMA_VERSION == "0.3.0"
    assert log["eval_library"]["name"] == "medlens"
    assert log["source_metadata"]["source_type"] == "evaluation_run"
    assert log["model_info"]["id"] == "medlens/random-baseline"
    assert log["model_info"]["additional_details"]["deployment_type"] == "self_deployed"
    main = log["evaluation_results"][0]
    overall = results_of(run)["overall"]
    score = main["score_details"]
    assert score["score"] == pytest.approx(overall["score"])
    interval = score["uncertainty"]["confidence_interval"]
    assert [interval["lower"], interval["upper"]] == pytest.approx(overall["ci"])
    assert interval["confidence_level"] == 0.95 and "cluster-robust" in interval["method"]
    assert score["uncertainty"]["num_samples"] == overall["n"] == 189
    assert score["details"]["chance_level"] == f"{overall['random']:.6g}"
    assert main["metric_config"]["metric_id"] == "accuracy"
    assert main["source_data"]["url"] == ["https://pydicom.github.io/", "https://scikit-image.org/"]
    assert main["source_data"]["additional_details"]["content_hash"] == json.loads(
        (run / "run.json").read_text())["spec"]["benchmark"]["content_hash"]  # fmt: skip
    rates = {r["metric_config"]["metric_id"]: r for r in log["evaluation_results"][1:]}
    assert set(rates) == {"medlens.unparsed_rate", "medlens.refused_rate", "medlens.error_rate"}
    assert all(r["metric_config"]["lower_is_better"] for r in rates.values())
    detailed = log["detailed_evaluation_results"]
    samples = (run / "export" / detailed["file_path"]).read_bytes()
    assert detailed["checksum"] == hashlib.sha256(samples).hexdigest()
    assert detailed["total_rows"] == len(lines) == 189
    first = lines[0]
    assert (
        first["evaluation_id"] == log["evaluation_id"]
        and first["model_id"] == "medlens/random-baseline"
    )
    assert first["evaluation_result_id"] == main["evaluation_result_id"]
    recipe = json.dumps({"raw": first["input"]["raw"], "reference": first["input"]["reference"]},
                        sort_keys=True, separators=(",", ":"))  # fmt: skip
    assert first["sample_hash"] == hashlib.sha256(recipe.encode()).hexdigest()
    correct = sum(line["evaluation"]["is_correct"] for line in lines)
    assert correct / 189 == pytest.approx(overall["score"])


def test_exporting_twice_gives_the_same_files(tmp_path: Path) -> None:
    run = named_run("demo", "first", tmp_path / "runs", "f")
    export(str(run), "--output", str(tmp_path / "a"))
    export(str(run), "--output", str(tmp_path / "b"))
    names = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.*"))
    assert names == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.*"))
    for name in names:
        if name.suffix == ".jsonl":
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def write_questions(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True)
    bench = folder / "bench.jsonl"
    lines = [{"id": f"q{i}", "question": f"Which one? [[q{i}]]", "kind": "choice",
              "options": {"A": "left", "B": "right"}, "answer": "A",
              "meta": {"task": "side"}} for i in range(n)]  # fmt: skip
    bench.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return bench


def test_errors_and_unparsed_answers_show_as_the_schema_allows(tmp_path: Path) -> None:
    bench = write_questions(tmp_path / "bench", 9)

    def reply(request: ChatRequest) -> str:
        number = int(re.search(r"\[\[q(\d+)\]\]", request.text).group(1))  # type: ignore[union-attr]
        if number < 2:
            raise HTTPFault(500, "the server fell over")
        if number == 2:
            return "I cannot tell from this image."  # refused
        return "zebra crossing at dusk" if number < 5 else "A"  # unparsed, then right

    with serve(ServerConfig(reply=reply)) as server:
        spec = f"openai:m?base_url={server.base_url}&max_retries=0&backoff=0&backoff_max=0"
        result = invoke_run(f"jsonl:{bench}", spec, tmp_path / "runs", "faulty")
    assert result.exit_code == 1, result.output  # errors beyond the allowed rate
    run = tmp_path / "runs" / "faulty"
    export(str(run))
    [(log, lines, _)] = logs(run / "export")
    rates = {
        r["metric_config"]["metric_id"]: r["score_details"]["score"]
        for r in log["evaluation_results"][1:]
    }
    assert rates["medlens.error_rate"] == pytest.approx(2 / 9)
    assert rates["medlens.unparsed_rate"] == pytest.approx(2 / 7)
    assert rates["medlens.refused_rate"] == pytest.approx(1 / 7)
    main = log["evaluation_results"][0]["score_details"]
    assert main["score"] == pytest.approx(4 / 7) and main["uncertainty"]["num_samples"] == 7
    assert main["details"]["error_rate"] == f"{2 / 9:.6g}"
    by_id = {line["sample_id"]: line for line in lines}
    failed = by_id["q0"]
    assert failed["error"].startswith("server") and failed["output"]["raw"] == []
    assert failed["metadata"]["counted_in_score"] == "false"
    unparsed = by_id["q3"]
    assert unparsed["error"] is None and unparsed["metadata"]["extraction_status"] == "unparsed"
    assert unparsed["evaluation"] == {"score": 0.0, "is_correct": False}
    assert unparsed["answer_attribution"][0]["extracted_value"] == ""
    assert unparsed["answer_attribution"][0]["extraction_method"] == "medlens:no_answer_found"
    assert by_id["q2"]["error"].startswith("refused") and by_id["q2"]["evaluation"]["score"] == 0.0
    assert by_id["q7"]["evaluation"]["is_correct"] and by_id["q7"]["input"]["choices"] == [
        "A. left",
        "B. right",
    ]
    assert log["model_info"]["id"] == "unknown/m"
    assert log["model_info"]["additional_details"]["deployment_type"] == "unknown"
    export(str(run), "--model-id", "acme/m-7b", "-o", str(tmp_path / "named"))
    [(named, _, path)] = logs(tmp_path / "named")
    assert named["model_info"]["id"] == "acme/m-7b" and path.parts[-3:-1] == ("acme", "m-7b")


def test_a_board_gives_one_log_per_model(tmp_path: Path) -> None:
    runs = tmp_path / "board"
    named_run("demo", "random", runs, "random")
    named_run("demo", "first", runs, "first")
    bench = write_questions(tmp_path / "bench", 4)
    named_run(f"jsonl:{bench}", "first", runs, "first-jsonl")
    out = tmp_path / "eee"
    export(str(runs), "--output", str(out), "--by", "task", "--organization", "Hospital X",
           "--collection", "medical-vlm-board")  # fmt: skip
    found = logs(out)
    assert {log["model_info"]["id"] for log, _, _ in found} == {"medlens/random-baseline",
                                                                  "medlens/first-baseline"}  # fmt: skip
    first = next(log for log, _, _ in found if log["model_info"]["id"] == "medlens/first-baseline")
    names = [r["evaluation_name"] for r in first["evaluation_results"]]
    assert {"demo.val", "jsonl.val"} <= set(names)
    assert all(p.parts[-4] == "medical-vlm-board" for _, _, p in found)
    assert first["source_metadata"]["source_organization_name"] == "Hospital X"
    task_results = [r for r in first["evaluation_results"] if ".task=" in r["evaluation_name"]]
    by_task = results_of(runs / "first")["by"]["task"]
    demo_tasks = {r["evaluation_name"].split("task=")[1]: r for r in task_results
                  if r["evaluation_result_id"].startswith("first:")}  # fmt: skip
    assert set(demo_tasks) == set(by_task)
    for value, result in demo_tasks.items():
        assert result["score_details"]["score"] == pytest.approx(by_task[value]["score"])
    lines = next(lines for log, lines, _ in found if log is first)
    assert {line["evaluation_result_id"] for line in lines} == {"first:score", "first-jsonl:score"}


def test_a_hub_benchmark_names_its_repo_and_commit(tmp_path: Path, hub_cache: Path) -> None:
    import hfds_fixtures as hx
    import multimodal_fixtures as fx

    release = fx.write_mmmu(tmp_path / "mmmu", {"validation": {"Pharmacy": 6}})
    hx.snapshot_folder(hub_cache, "MMMU/MMMU", "f" * 40, release)
    run = named_run("hfds:MMMU/MMMU?subjects=Pharmacy", "random", tmp_path / "runs", "hub")
    export(str(run))
    [(log, lines, path)] = logs(run / "export")
    source = log["evaluation_results"][0]["source_data"]
    assert source["source_type"] == "hf_dataset" and source["hf_repo"] == "MMMU/MMMU"
    assert source["hf_split"] == "validation" and source["samples_number"] == 6
    assert source["additional_details"]["commit"] == "f" * 40
    assert source["additional_details"]["spec"] == "hfds:MMMU/MMMU?subjects=Pharmacy"
    assert path.parts[-4] == "hfds" and len(lines) == 6
    assert {line["metadata"]["n_images"] for line in lines} == {"1", "2", "3"}


def test_a_judged_score_source_records_its_judge(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=10, n_closed=2)
    with serve(judge_config(JudgeReplies())) as server:
        judged = CliRunner().invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                          "--protocol", "equivalence"])  # fmt: skip
        assert judged.exit_code == 0, judged.output
    export(str(run), "--score", "combined:judge-model")
    [(log, _, _)] = logs(run / "export")
    config = log["evaluation_results"][0]["metric_config"]
    scoring = config["llm_scoring"]
    assert scoring["judges"][0]["model_info"]["name"].startswith("openai:judge-model")
    assert "equivalen" in scoring["input_prompt"].lower()
    assert config["additional_details"]["score_source"] == "combined:judge-model"
    assert log["model_info"]["additional_details"]["deployment_type"] == "unknown"  # replay


def test_a_file_the_schema_refuses_is_never_written(tmp_path: Path) -> None:
    bad = ExportFile("data/c/d/m/x.json", json.dumps({"schema_version": "0.3.0"}).encode())
    with pytest.raises(
        MedlensError, match=r"data/c/d/m/x.json: \(top\): 'evaluation_id' is a required"
    ):
        validate_files([bad])
    line = ExportFile("data/c/d/m/x_samples.jsonl", b'{"schema_version": "0.3.0"}\n')
    with pytest.raises(MedlensError, match=r"x_samples\.jsonl, line 1"):
        validate_files([line])


def test_refusals_are_one_line_and_write_nothing(tmp_path: Path) -> None:
    run = named_run("demo", "random", tmp_path / "runs", "r")
    other = named_run("demo", "first", tmp_path / "runs", "f")
    cases = [
        (["export", str(run), "--format", "every-eval-ever", "--relationship", "self"], "--relationship"),
        (["export", str(run), str(other), "--format", "every-eval-ever"], "--output DIR"),
        (["export", str(run), str(other), "--format", "vlmeval", "-o", str(tmp_path / "x")],
         "exports one run"),
        (["export", str(tmp_path), "--format", "every-eval-ever", "-o", str(tmp_path / "y")],
         "not a run directory, nor a folder holding runs"),
        (["export", str(run), "--format", "every-eval-ever", "--by", "nope"], "--by nope"),
    ]  # fmt: skip
    for args, message in cases:
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert not (run / "export").exists() and not (tmp_path / "y").exists()


def test_interval_method_names_the_cell_kind() -> None:
    assert (
        interval_method({"n": 40, "images": 40}, True)
        == "Wilson score interval (items independent)"
    )
    clustered = interval_method({"n": 40, "images": 8, "effective_images": 7.5}, True)
    assert "cluster-robust t interval with 8 images (effective 7.5" in clustered
    assert interval_method({"n": 5, "images": 5}, False).startswith("bounded-mean interval")
