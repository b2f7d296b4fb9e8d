"""Source admission (issue 33 item 7): licence allows evaluation, labels human-made, release
against the model's training cutoff — per source, in `check` and on the protocol card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from builder.test_build_labels import build, slake_labels
from cli_runs import invoke_run, named_run
from data_paths import realdata_dir
from items_fixtures import one_error_line
from medlens.checks.admission import EVALUATION, LABELS, shipped_admission
from medlens.cli import app

runner = CliRunner()


def admission(spec: str, *extra: str) -> dict[str, object]:
    result = runner.invoke(app, ["check", spec, "--json", "--sample", "2", *extra])
    assert result.exit_code in (0, 1), result.output
    checks = json.loads(result.stdout)["checks"]
    return next(c for c in checks if c["name"] == "admission")


def test_shipped_facts_cover_the_supported_sources_with_valid_values() -> None:
    facts = shipped_admission()
    for name in ("vqa-rad", "slake", "pathvqa", "pubmedqa", "medqa", "medmcqa", "mmlu", "gmai",
                 "mmbu", "medcmr"):  # fmt: skip
        found = facts.lookup(name)
        assert found.known and found.licence, name
        assert found.evaluation in EVALUATION and found.labels in LABELS
    assert facts.lookup("VQA_RAD").licence.startswith("CC0 1.0")  # aliases, any spelling
    assert not facts.lookup("some-hospital-set").known


def test_real_pathvqa_is_flagged_for_machine_made_labels_and_vqa_rad_is_not() -> None:
    path = admission(f"pathvqa:{realdata_dir('pathvqa')}")
    assert path["status"] == "warn" and path["data"]["flagged"] == ["pathvqa"]
    assert "its labels are not human-made (automatic)" in path["summary"]
    rad = admission(f"vqa-rad:{realdata_dir('vqa_rad')}")
    assert rad["status"] == "info" and rad["data"]["flagged"] == []
    (source,) = rad["data"]["sources"]
    assert source["evaluation"] == "allowed" and source["labels"] == "human"
    assert source["released"] == "2018-11"
    assert rad["details"][0].startswith("vqa-rad: licence allows evaluation [CC0 1.0")


def test_a_user_file_adds_and_overrides_sources_of_a_built_benchmark(tmp_path: Path) -> None:
    labels, root, _ = slake_labels(tmp_path, n_images=3)  # its rows carry source=slake
    out = tmp_path / "b.jsonl"
    assert (
        build(str(labels), "--images", str(root), "--output", str(out), "--granularity", "box")[0]
        == 0
    )
    line = admission(f"jsonl:{out}")
    assert [s["source"] for s in line["data"]["sources"]] == ["jsonl", "slake"]
    assert line["data"]["sources"][1]["labels"] == "human"
    assert "not known to medlens (give --admission FILE): 'jsonl'" in line["details"]
    mine = tmp_path / "mine.toml"
    mine.write_text('[slake]\nevaluation = "not allowed"\nevaluation_note = "site policy"\n'
                    '[jsonl]\nlicence = "ours"\nlabels = "automatic"\n', encoding="utf-8")  # fmt: skip
    line = admission(f"jsonl:{out}", "--admission", str(mine))
    assert line["status"] == "warn" and line["data"]["flagged"] == ["jsonl", "slake"]
    assert "slake: its licence does not allow evaluation" in line["summary"]
    slake = line["data"]["sources"][1]
    assert slake["labels"] == "human" and slake["released"] == "2021-02"  # kept from shipped


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ('[slake]\nlabels = "doctors"\n', "[slake].labels: 'doctors' is not one of human"),
        ('[slake]\nreleased = "2021"\n', "[slake].released: '2021' is not a month YYYY-MM"),
        ('[slake]\nlicense = "x"\n', "[slake].license: unknown field"),
        ('[a]\naliases = ["b"]\n[b]\nlicence = "x"\n', "[b].aliases: name 'b' is already used by [a]"),
        ("[slake\n", "not a TOML admission file"),
    ],
)  # fmt: skip
def test_a_bad_admission_file_is_one_line_exit_2(tmp_path: Path, body: str, where: str) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text(body, encoding="utf-8")
    spec = f"vqa-rad:{realdata_dir('vqa_rad')}"
    line = one_error_line(runner.invoke(app, ["check", spec, "--admission", str(mine)]))
    assert f"mine.toml, {where}" in line or (f"mine.toml: {where}" in line), line
    result = invoke_run("demo", "first", tmp_path / "runs", "r", "--admission", str(mine))
    assert where.split(":")[0] in one_error_line(result)
    assert not (tmp_path / "runs").exists()


def _card(run: Path) -> str:
    result = runner.invoke(app, ["report", str(run), "--format", "md"])
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "| source admission |" in line)
    return row.replace("\\[", "[").replace("\\]", "]")  # markdown escapes the brackets


def test_the_card_sets_each_release_against_the_cutoff_and_records_user_facts(
    tmp_path: Path,
) -> None:
    bench = f"vqa-rad:{realdata_dir('vqa_rad')}"
    runs = tmp_path / "runs"
    later = named_run(
        bench, "first", runs, "later", "--limit", "20", "--model-info", "cutoff=2024-06"
    )
    row = _card(later)
    assert "vqa-rad: licence allows evaluation [CC0 1.0" in row and "labels human-made" in row
    assert (
        "released 2018-11, before the model's training cutoff 2024-06: likely in its training data"
        in row
    )
    earlier = named_run(
        bench, "first", runs, "earlier", "--limit", "20", "--model-info", "cutoff=2018-01"
    )
    assert "released 2018-11, after the model's training cutoff 2018-01" in _card(earlier)
    mine = tmp_path / "mine.toml"
    mine.write_text('[vqa-rad]\nlabels = "mixed"\n', encoding="utf-8")
    told = named_run(bench, "first", runs, "told", "--limit", "20", "--admission", str(mine))
    assert json.loads((told / "run.json").read_text())["admission"] == {
        "vqa-rad": {"labels": "mixed"}
    }
    row = _card(told)
    assert "labels partly automatic (mixed)" in row and "(model training cutoff not given)" in row
