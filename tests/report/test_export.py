"""`medlens export`: GMAI TEST submission and the VLMEvalKit result set.

Acceptance: given the same predictions (``replay:``) and ``--extract vlmeval``, medlens's
per-breakdown accuracies equal what VLMEvalKit writes to its ``_acc.csv`` files, to the last
digit. VLMEvalKit is not installed here, so its side is recomputed independently in this file
with pandas, following VLMEVAL_COMPAT.md: hit = exact-matching answer == gold letter; per
breakdown value, the mean of the hits; values sorted; ``split`` = ``none``; ``to_csv`` with
every field quoted. What could not be verified: the exact-matching outcomes are those the
compatibility notes list (the predictions below are built only from those cases), and the real
GMAI header spellings.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from gmai_fixture import write_gmai_tsv
from medlens.cli import app

runner = CliRunner()
BREAKDOWNS = ("clinical vqa task", "department", "perceptual granularity")


def vlmeval_case(number: int, options: dict[str, str], gold: str) -> tuple[str, str | None]:
    """A prediction and the letter VLMEvalKit's exact matching reads from it (None: no answer).

    Cases come from the observed outcomes in VLMEVAL_COMPAT.md.
    """
    letters = list(options)
    wrong = next(letter for letter in letters if letter not in gold)
    first = gold[0]
    cases: list[tuple[str, str | None]] = [
        (first, first),
        (wrong, wrong),
        (f"The answer is {first.lower()}.", first if first in "ABCD" else None),
        (first.lower(), None),
        (f"answer: ({first.lower()})", None),
        (f"Final Answer: \\boxed{{{wrong}}}", wrong),
        (options[first], _text_step(options, options[first])),
        (f"{letters[0]}, {letters[1]}", None),
        ("Cannot determine the answer", "Z"),
    ]
    return cases[number % len(cases)]


def _text_step(options: dict[str, str], prediction: str) -> str | None:
    """VLMEvalKit's fallback: exactly one option text inside the prediction (case-insensitive)."""
    inside = [k for k, v in options.items() if v.lower() in prediction.lower()]
    return inside[0] if len(inside) == 1 else None


def read_tsv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, sep="\t", dtype={"index": str})


def options_of(row: pd.Series) -> dict[str, str]:
    return {k: str(row[k]) for k in "ABCDE" if k in row and not pd.isna(row[k])}


@pytest.fixture(scope="module")
def val_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """A GMAI VAL TSV (real VQA-RAD images), replayed predictions, run with --extract vlmeval."""
    folder = tmp_path_factory.mktemp("export")
    tsv = folder / "GMAI_VAL.tsv"
    write_gmai_tsv(tsv, n_rows=180)
    frame = read_tsv(tsv)
    predictions, expected = [], []
    for number, row in frame.iterrows():
        gold = re.sub(r"[\s,]", "", str(row["answer"]))
        text, letter = vlmeval_case(int(str(number)), options_of(row), gold)
        predictions.append(text)
        expected.append(letter)
    frame["prediction"], frame["expected"] = predictions, expected
    frame[["index", "prediction"]].to_excel(folder / "model_GMAI.xlsx", index=False)
    result = runner.invoke(app, [
        "run", "--bench", f"gmai:{tsv}", "--model", f"replay:{folder / 'model_GMAI.xlsx'}",
        "--extract", "vlmeval", "--out", str(folder), "--name", "val",
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    return folder / "val", frame


def vlmevalkit_acc_csv(frame: pd.DataFrame, column: str) -> str:
    """VLMEvalKit's per-breakdown table, recomputed from the TSV and the predictions."""
    data = frame.copy()
    data.columns = [c if len(c) == 1 and c.isupper() else c.lower() for c in data.columns]
    data["hit"] = [
        int(e is not None and e == a) for e, a in zip(data["expected"], data["answer"], strict=True)
    ]
    table = {"split": ["none"], "Overall": [np.mean(data["hit"])]}
    for value in sorted(set(data[column])):
        table[value] = [np.mean(data[data[column] == value]["hit"])]
    return str(pd.DataFrame(table).to_csv(index=False, quoting=csv.QUOTE_ALL))


def test_vlmeval_acc_csvs_equal_vlmevalkit_to_the_last_digit(
    val_run: tuple[Path, pd.DataFrame], tmp_path: Path
) -> None:
    run_dir, frame = val_run
    result = runner.invoke(
        app, ["export", str(run_dir), "--format", "vlmeval", "--output", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    for column in BREAKDOWNS:
        written = (tmp_path / f"val_GMAI-MMBench_VAL_{column}_acc.csv").read_text(encoding="utf-8")
        assert written == vlmevalkit_acc_csv(frame, column)
    assert frame["expected"].isna().sum() > 10  # the no-answer cases are exercised


def test_report_vlmeval_scores_equal_the_csv_values(val_run: tuple[Path, pd.DataFrame]) -> None:
    """The same accuracies appear in `report --format json` (vlmeval_score), bit for bit."""
    import json

    run_dir, frame = val_run
    report = json.loads(runner.invoke(app, ["report", str(run_dir), "--format", "json"]).output)
    table = pd.read_csv(io.StringIO(vlmevalkit_acc_csv(frame, "perceptual granularity")))
    canonical = {
        "Image Level": "image",
        "Box Level": "box",
        "Mask Level": "mask",
        "Contour Level": "contour",
    }
    for native, level in canonical.items():
        assert report["by"]["granularity"][level]["vlmeval_score"] == float(table[native][0])
    departments = pd.read_csv(io.StringIO(vlmevalkit_acc_csv(frame, "department")))
    for name, cell in report["by"]["department"].items():
        assert cell["vlmeval_score"] == float(departments[name][0])
    assert report["overall"]["vlmeval_score"] == float(table["Overall"][0])


def test_vlmeval_result_table(val_run: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    run_dir, frame = val_run
    runner.invoke(app, ["export", str(run_dir), "--format", "vlmeval", "--output", str(tmp_path)])
    table = pd.read_excel(
        tmp_path / "val_GMAI-MMBench_VAL_exact_matching_result.xlsx", dtype={"index": str}
    )
    assert list(table.columns[:5]) == ["index", "prediction", "answer", "hit", "log"]
    assert "image" not in table.columns and set(BREAKDOWNS) <= set(table.columns)
    merged = table.merge(frame[["index", "expected", "answer"]], on="index", suffixes=("", "_tsv"))
    assert len(merged) == len(frame) == 180
    assert list(merged["hit"]) == [
        int(e == a) for e, a in zip(merged["expected"], merged["answer_tsv"], strict=True)
    ]
    overall = pd.read_csv(tmp_path / "val_GMAI-MMBench_VAL_acc.csv")
    assert list(overall.columns) == ["split", "Overall"] and overall["split"][0] == "none"


def test_gmai_submission_for_a_test_split(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_TEST.tsv"
    write_gmai_tsv(tsv, n_rows=30, with_answers=False)
    frame = read_tsv(tsv)
    predictions = pd.DataFrame({"index": frame["index"], "prediction": ["=1+1", *(["B"] * 29)]})
    predictions.to_csv(tmp_path / "pred.csv", index=False)
    named_run(f"gmai:{tsv}", f"replay:{tmp_path / 'pred.csv'}", tmp_path, "test")
    out = tmp_path / "submission.xlsx"
    result = runner.invoke(
        app, ["export", str(tmp_path / "test"), "--format", "gmai-submission", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    sheet = openpyxl.load_workbook(out).active
    assert sheet is not None
    header = [c.value for c in sheet[1]]
    native = [c for c in frame.columns if c not in ("image",)]
    assert header == [*native, "prediction"]
    assert "answer" not in header and sheet.max_row == 31
    formula_cell = sheet.cell(row=2, column=len(header))
    assert formula_cell.value == "=1+1" and formula_cell.data_type == "s"  # text, never a formula
    submitted = pd.read_excel(out, dtype={"index": str})
    assert list(submitted["index"]) == list(frame["index"])
    assert list(submitted["clinical VQA task"]) == list(frame["clinical VQA task"])


def test_vlmeval_export_of_a_test_split_names_the_answer_key(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_TEST.tsv"
    write_gmai_tsv(tsv, n_rows=12, with_answers=False)
    named_run(f"gmai:{tsv}", "first", tmp_path, "t")
    result = runner.invoke(app, ["export", str(tmp_path / "t"), "--format", "vlmeval"])
    assert result.exit_code == 2
    assert "official answer key" in result.output and "gmai-submission" in result.output
    bad = runner.invoke(app, ["export", str(tmp_path / "t"), "--format", "csv"])
    assert bad.exit_code == 2 and "unknown export format" in bad.output


def test_item_without_prediction_is_a_miss_with_a_log(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_VAL.tsv"
    write_gmai_tsv(tsv, n_rows=10)
    frame = read_tsv(tsv)
    pd.DataFrame({"index": frame["index"][1:], "prediction": frame["answer"][1:]}).to_csv(
        tmp_path / "pred.tsv", sep="\t", index=False
    )
    model = f"replay:{tmp_path / 'pred.tsv'}"
    run = invoke_run(f"gmai:{tsv}", model, tmp_path, "v", "--extract", "vlmeval")
    assert run.exit_code in (0, 1), run.output
    runner.invoke(
        app, ["export", str(tmp_path / "v"), "--format", "vlmeval", "-o", str(tmp_path / "x")]
    )
    table = pd.read_excel(
        tmp_path / "x" / "v_GMAI-MMBench_VAL_exact_matching_result.xlsx", dtype={"index": str}
    )
    missing = table[table["index"] == frame["index"][0]].iloc[0]
    assert missing["hit"] == 0 and "no prediction" in missing["log"]


def test_native_columns_keep_file_order_without_derived_keys() -> None:
    from medlens.core.items import Item
    from medlens.report.export import native_columns

    meta = {"category": "c", "clinical VQA task": "t", "department": "d", "task": "t", "granularity": "box",
            "image_id": "1", "split": "val", "perceptual granularity": "Box Level"}  # fmt: skip
    items = [Item(id="1", question="q", kind="choice", meta=meta)]
    assert native_columns(items) == [
        "category",
        "clinical VQA task",
        "department",
        "perceptual granularity",
    ]


def test_accuracy_by_follows_vlmevalkit_with_a_split_column() -> None:
    from medlens.report.export import accuracy_by, accuracy_csv

    frame = pd.DataFrame({
        "hit": [1, 0, 1, 1, 0, 0, 1],
        "split": ["dev", "dev", "dev", "test", "test", "test", "test"],
        "department": ["b", "a", "a", "b", "b", "a", "a"],
    })  # fmt: skip
    table = accuracy_by(frame, "department")
    assert list(table.columns) == ["split", "Overall", "a", "b"]
    assert list(table["split"]) == ["dev", "test"]
    assert table["Overall"].tolist() == [2 / 3, 0.5] and table["a"].tolist() == [0.5, 0.5]
    assert accuracy_csv(table).decode().splitlines()[1] == '"dev","0.6666666666666666","0.5","1.0"'


def test_write_export_file_or_directory(tmp_path: Path) -> None:
    from medlens.report.export import ExportFile, write_export

    one = write_export([ExportFile("a.xlsx", b"1")], tmp_path / "out" / "named.xlsx")
    assert one == [tmp_path / "out" / "named.xlsx"] and one[0].read_bytes() == b"1"
    many = write_export([ExportFile("a.csv", b"1"), ExportFile("b.csv", b"2")], tmp_path / "dir")
    assert sorted(p.name for p in many) == ["a.csv", "b.csv"]


def test_benchmarks_without_gmai_breakdowns_get_the_overall_csv(tmp_path: Path) -> None:
    from benchfiles import write_jsonl_benchmark

    bench = write_jsonl_benchmark(tmp_path / "bench", n_items=40, n_images=4, seed=1)
    named_run(f"jsonl:{bench}", "first", tmp_path, "j")
    result = runner.invoke(
        app, ["export", str(tmp_path / "j"), "--format", "vlmeval", "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "x").iterdir())
    assert names[0] == "j_acc.csv" and any(n.endswith("department_acc.csv") for n in names)
    assert not any("clinical" in n for n in names)


def test_spreadsheet_text_stays_text(tmp_path: Path) -> None:
    from medlens.core.spreadsheet import sheet_name, workbook_bytes, write_rows

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    write_rows(sheet, [("=SUM(1,2)", "bell\x07char", 3, None)])
    loaded = openpyxl.load_workbook(io.BytesIO(workbook_bytes(book))).active
    assert loaded is not None
    assert [c.value for c in loaded[1]] == ["=SUM(1,2)", "bellchar", 3]
    assert loaded["A1"].data_type == "s"
    used: set[str] = set()
    assert sheet_name("by a/b:c [d]", used) == "by a_b_c _d_"
    assert sheet_name("x" * 40, used) == "x" * 31 and sheet_name("x" * 40, used) == "x" * 29 + " 2"


def test_vlmeval_export_onto_an_existing_file_is_a_usage_error(tmp_path: Path) -> None:
    """Was exit 4 (a storage error: "File exists (EEXIST); check the disk") for a mistyped -o."""
    named_run("demo", "first", tmp_path, "d")
    taken = tmp_path / "notes.json"
    taken.write_text("{}")
    result = runner.invoke(app, ["export", str(tmp_path / "d"), "-f", "vlmeval", "-o", str(taken)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("medlens: error:")]
    assert len(lines) == 1 and str(taken) in lines[0] and "give a folder" in lines[0]
    assert taken.read_text() == "{}"
