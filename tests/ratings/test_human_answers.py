"""The human upper bound on real VQA-RAD: `ratings export --protocol answer` writes an answer
sheet with the images beside it; `ratings import` turns one rater's answers into a run, model
"human", read and scored as a model's, that reports, compares and boards like any run."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import items_of, realdata_dir
from medlens.cli import app

runner = CliRunner()


@pytest.fixture
def model_run(tmp_path: Path) -> Path:
    return named_run(f"vqa-rad:{realdata_dir('vqa_rad')}", "first", tmp_path / "runs", "vr",
                     "--limit", "60")  # fmt: skip


def _export(run: Path, sheet: Path) -> list[dict[str, str]]:
    result = runner.invoke(app, ["ratings", "export", str(run), "--protocol", "answer",
                                 "--sample", "10", "--output", str(sheet)])  # fmt: skip
    assert result.exit_code == 0, result.output
    with sheet.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _write(sheet: Path, rows: list[dict[str, str]]) -> None:
    with sheet.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_an_answer_sheet_becomes_a_human_run_that_compares_and_boards(
    model_run: Path, tmp_path: Path
) -> None:
    sheet = tmp_path / "answers.csv"
    rows = _export(model_run, sheet)
    assert len(rows) == 10 and set(rows[0]) >= {"study", "id", "question", "images", "answer"}
    assert "reference" not in rows[0] and all(not r["answer"] for r in rows)  # nothing given away
    for row in rows:  # every image is beside the sheet, named by relative path
        assert row["images"] and all(
            (tmp_path / name).is_file() for name in row["images"].split(", ")
        )
    gold = {item.id: item for item in items_of(f"vqa-rad:{realdata_dir('vqa_rad')}")}
    for number, row in enumerate(rows):
        answer = str(gold[row["id"]].answer)
        row["answer"] = answer if number < 8 else "something else entirely"
        row["rater"], row["qualification"] = "rad1", "radiologist"
    _write(sheet, rows)
    imported = runner.invoke(app, ["ratings", "import", str(model_run), str(sheet), "--json"])
    assert imported.exit_code == 0, imported.output
    found = json.loads(imported.stdout)
    human = Path(found["run"])
    assert human.name == "vr-human-rad1" and found["model"] == "human" and found["added"] == 10
    assert found["overall"]["n"] == 10 and found["overall"]["score"] == pytest.approx(0.8)
    run_json = json.loads((human / "run.json").read_text())
    assert run_json["spec"]["model"] == "human" and run_json["human"]["rater"] == "rad1"
    again = runner.invoke(app, ["ratings", "import", str(model_run), str(sheet), "--json"])
    assert json.loads(again.stdout)["added"] == 0  # idempotent
    report = runner.invoke(app, ["report", str(human)])
    assert report.exit_code == 0, report.output
    compared = runner.invoke(app, ["compare", str(model_run), str(human), "--json"])
    assert compared.exit_code == 0, compared.output
    assert json.loads(compared.stdout)["overall"]["n"] == 10
    board = runner.invoke(
        app, ["board", str(model_run), str(human), "--align", "intersect", "--json"]
    )
    assert board.exit_code == 0, board.output
    names = {m["run"]: m for m in json.loads(board.stdout)["models"]}
    assert "vr-human-rad1" in names and names["vr-human-rad1"]["score"] == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("change", "words"),
    [("unknown", "is not an item of study"), ("two_raters", "import one rater's sheet at a time"),
     ("no_rater", "needs a rater id")],
)  # fmt: skip
def test_a_bad_answer_sheet_is_one_line_exit_2_and_writes_nothing(
    model_run: Path, tmp_path: Path, change: str, words: str
) -> None:
    sheet = tmp_path / "answers.csv"
    rows = _export(model_run, sheet)
    for number, row in enumerate(rows):
        row["answer"], row["rater"] = "yes", "rad1"
        if change == "two_raters" and number == 3:
            row["rater"] = "rad2"
        if change == "no_rater" and number == 2:
            row["rater"] = ""
    if change == "unknown":
        rows[4]["id"] = "not-an-item"
    _write(sheet, rows)
    result = runner.invoke(app, ["ratings", "import", str(model_run), str(sheet)])
    assert result.exit_code == 2 and words in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not list((tmp_path / "runs").glob("vr-human-*"))
