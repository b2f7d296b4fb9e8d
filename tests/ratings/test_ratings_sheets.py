"""`medlens ratings export`: blinded sheets that round-trip through openpyxl, and the protocols."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from medlens.core.errors import SpecError
from medlens.ratings.protocols import MULTIMEDQA, get_protocol
from ratings_helpers import RUBRIC, invoke, make_runs, medlens, sheet_rows, tree, write_judge


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_runs(tmp_path_factory.mktemp("ratings-sheets"))


def test_export_writes_a_blinded_shuffled_sheet_with_instructions(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from openpyxl import load_workbook

    run, _ = runs
    sheet = tmp_path / "sheet.xlsx"
    result = medlens("ratings", "export", run, "--sample", "7", "--seed", "5", "--output", sheet,
                     "--protocol", "multimedqa")  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = sheet_rows(sheet)
    assert len(rows) == 7 and len({r["id"] for r in rows}) == 7
    assert list(rows[0])[:6] == ["study", "id", "question", "reference", "answer", "images"]
    assert [a.name for a in MULTIMEDQA.axes] == list(rows[0])[6:18]
    assert list(rows[0])[18:] == ["rater", "qualification", "date", "comment"]
    ids = [r["id"] for r in rows]
    assert ids != sorted(ids, key=lambda i: int(i[1:]))  # shuffled
    workbook = load_workbook(sheet)
    text = "\n".join(str(c) for row in workbook["ratings"].iter_rows(values_only=True) for c in row)
    assert "random" not in text and "rand" not in text  # the model is hidden
    instructions = list(workbook["instructions"].iter_rows(values_only=True))
    by_column = {row[0]: row for row in instructions if row and row[0]}
    assert (
        by_column["consensus"][3] == "aligned with consensus | no consensus | opposed to consensus"
    )
    assert by_column["harm_extent"][1] == "Possible harm"
    assert {r[1] for r in instructions if r and r[0] in {a.name for a in MULTIMEDQA.axes}} == {
        "Scientific consensus", "Comprehension", "Knowledge recall", "Reasoning", "Completeness",
        "Possible harm", "Bias",
    }  # fmt: skip
    validations = workbook["ratings"].data_validations.dataValidation
    assert any('"yes,no"' in (v.formula1 or "") for v in validations)
    # the answers in the sheet are the run's outputs, as text
    records = {json.loads(line)["id"]: json.loads(line) for line in (run / "records.jsonl").open()}
    assert all(r["answer"] == records[r["id"]]["output"] for r in rows)


def test_export_is_deterministic_and_the_seed_changes_the_sample(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from medlens.ratings.export import export_ratings

    run, _ = runs
    first, _ = export_ratings(run, tmp_path / "a.xlsx", 10, 1, "medcmr")
    again, _ = export_ratings(run, tmp_path / "b.xlsx", 10, 1, "medcmr")
    other, _ = export_ratings(run, tmp_path / "c.xlsx", 10, 2, "medcmr")
    assert first.id == again.id and first.items == again.items
    assert other.items != first.items
    assert [r["id"] for r in sheet_rows(tmp_path / "a.xlsx")] == list(first.items)
    header = list(sheet_rows(tmp_path / "a.xlsx")[0])
    assert header[6:10] == list(RUBRIC)


def test_csv_export_writes_instructions_beside_it(runs: tuple[Path, Path], tmp_path: Path) -> None:
    from medlens.ratings.export import export_ratings

    run, _ = runs
    study, written = export_ratings(run, tmp_path / "sheet.csv", 3, 0, "equivalence")
    assert written == [tmp_path / "sheet.csv", tmp_path / "sheet.instructions.csv"]
    rows = list(csv.DictReader((tmp_path / "sheet.csv").open(encoding="utf-8")))
    assert [r["id"] for r in rows] == list(study.items)
    assert "equivalent" in rows[0] and rows[0]["study"] == study.id
    assert "negation" in (tmp_path / "sheet.instructions.csv").read_text(encoding="utf-8")


def test_formula_like_answers_stay_text(tmp_path: Path) -> None:
    from openpyxl import load_workbook

    from medlens.ratings.sheets import Sheet, read_sheet, write_sheet

    sheet = Sheet(["id", "answer"], [("-7", '=HYPERLINK("x")')], [()], {})
    write_sheet(tmp_path / "s.xlsx", sheet)
    cell = load_workbook(tmp_path / "s.xlsx")["ratings"]["B2"]
    assert cell.data_type == "s" and cell.value == '=HYPERLINK("x")'
    write_sheet(tmp_path / "s.csv", sheet)
    assert "'=HYPERLINK" in (tmp_path / "s.csv").read_text(encoding="utf-8")
    assert read_sheet(tmp_path / "s.csv").rows == [(2, {"id": "-7", "answer": '=HYPERLINK("x")'})]


def test_export_with_a_judge_samples_only_judged_items_and_takes_its_protocol(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from medlens.ratings.export import export_ratings

    run, _ = runs
    write_judge(run, "gpt", "rubric", {f"q{i}": [dict.fromkeys(RUBRIC, 5)] for i in range(5)})
    try:
        study, _ = export_ratings(run, tmp_path / "s.xlsx", 50, 0, None, judge="gpt")
    finally:
        import shutil

        shutil.rmtree(run / "judges")
    assert sorted(study.items) == [f"q{i}" for i in range(5)]
    assert study.protocol.name == "medcmr"


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_file_protocol_from_toml_or_json(tmp_path: Path, suffix: str) -> None:
    rubric = {
        "name": "report quality", "instructions": "Rate the report.", "scale": [1, 5],
        "dimensions": [{"name": "accuracy", "description": "Findings correct?", "weight": 3},
                       {"name": "tone", "options": ["good", "neutral", "bad"]}],
    }  # fmt: skip
    path = tmp_path / f"rubric{suffix}"
    if suffix == ".json":
        path.write_text(json.dumps(rubric), encoding="utf-8")
    else:
        path.write_text(
            'name = "report quality"\ninstructions = "Rate the report."\nscale = [1, 5]\n'
            '[[dimensions]]\nname = "accuracy"\ndescription = "Findings correct?"\nweight = 3\n'
            '[[dimensions]]\nname = "tone"\noptions = ["good", "neutral", "bad"]\n',
            encoding="utf-8",
        )
    protocol = get_protocol(f"file:{path}")
    accuracy, tone = protocol.axes
    assert accuracy.values == [1, 2, 3, 4, 5] and accuracy.weight == 3
    assert tone.parse("Neutral") == 1.0 and tone.parse("5") is None
    assert accuracy.parse("6") is None and accuracy.parse("4") == 4.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dimensions = []", "field 'dimensions'"),
        ('[[dimensions]]\nname = "a"\nscale = [5, 1]', "dimension 1, field 'scale'"),
        ('[[dimensions]]\nname = "a"\nscale = [0, 3]\nweight = -1', "field 'weight'"),
        ('weights = {b = 1}\n[[dimensions]]\nname = "a"\nscale = [0, 3]', "unknown dimension"),
        ("this is = = not toml", "not valid TOML"),
    ],
)
def test_bad_rubric_files_name_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "r.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(SpecError, match=message):
        get_protocol(f"file:{path}")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "0"], "--sample must be at least 1"),
        (["--sample", "3", "--protocol", "nope"], "unknown rating protocol 'nope'"),
        (["--sample", "3", "--judge", "nobody"], "no judge named 'nobody'"),
    ],
)
def test_bad_export_arguments_exit_2_and_write_nothing(
    runs: tuple[Path, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    run, _ = runs
    before = tree(run)
    result = medlens("ratings", "export", run, "--output", tmp_path / "s.xlsx", *args)
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert tree(run) == before and not (tmp_path / "s.xlsx").exists()


def test_a_sample_larger_than_the_rateable_items_says_so(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    result = invoke("ratings", "export", run, "--sample", "5000", "--output", tmp_path / "s.xlsx")
    assert result.returncode == 0, result.stdout
    assert "note: --sample 5000 asked for more items than the" in result.stderr
    quiet = invoke("ratings", "export", run, "--sample", "3", "--output", tmp_path / "t.xlsx")
    assert "note:" not in quiet.stderr
