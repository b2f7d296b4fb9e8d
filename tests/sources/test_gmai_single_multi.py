"""GMAI single/multi markers: a ``question_type`` column (``*`` single, ``#`` multi) decides the
kind on VAL and TEST alike, the prompt follows it, and every report has a single/multi line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.api import load_benchmark
from medlens.cli import app
from medlens.core.errors import InputError
from medlens.core.items import Item
from medlens.execution.prompts import build_prompt
from medlens.scoring.protocol_sections import answer_mode_source
from tiny_images import B64

VAL_HEADER = ["index", "question", "A", "B", "C", "D", "answer", "image", "question_type"]
TEST_HEADER = [name for name in VAL_HEADER if name != "answer"]
ROWS = [  # index, gold, marker
    ("1", "B", "*"),
    ("2", "AC", "#"),
    ("3", "D", "#"),  # multi-answer item with one correct option
    ("4", "A", "*"),
    ("5", "B,D", "#"),
]


def write(path: Path, header: list[str], rows: list[dict[str, str]]) -> Path:
    lines = ["\t".join(header)]
    for row in rows:
        lines.append("\t".join(row.get(name, "") for name in header))
    path.write_text("\n".join(lines) + "\n")
    return path


def row(index: str, gold: str, marker: str | None) -> dict[str, str]:
    cells = {"index": index, "question": f"Which findings are shown in image {index}?",
             "A": "Nodule", "B": "Effusion", "C": "Cardiomegaly", "D": "Pneumothorax",
             "answer": gold, "image": B64}  # fmt: skip
    if marker is not None:
        cells["question_type"] = marker
    return cells


def items_of(path: Path) -> list[Item]:
    return list(load_benchmark(f"gmai:{path}").items())


def test_markers_decide_the_kind_on_val(tmp_path: Path) -> None:
    items = items_of(write(tmp_path / "VAL.tsv", VAL_HEADER, [row(*r) for r in ROWS]))
    assert [(i.kind, i.answer) for i in items] == [
        ("choice", "B"), ("multi_choice", "AC"), ("multi_choice", "D"), ("choice", "A"),
        ("multi_choice", "BD"),
    ]  # fmt: skip
    assert answer_mode_source(items) == "marker"


def test_markers_decide_the_kind_on_test_so_both_splits_run_one_protocol(tmp_path: Path) -> None:
    val = items_of(write(tmp_path / "VAL.tsv", VAL_HEADER, [row(*r) for r in ROWS]))
    test = items_of(write(tmp_path / "TEST.tsv", TEST_HEADER, [row(*r) for r in ROWS]))
    assert [i.kind for i in test] == [i.kind for i in val]
    assert all(i.answer is None for i in test)
    for style in ("medlens", "vlmeval"):
        assert [build_prompt(i, style) for i in test] == [build_prompt(i, style) for i in val]
    assert "every correct option" in build_prompt(test[1], "medlens")
    assert "single correct option" in build_prompt(test[0], "medlens")


MARKER_WORDS = [("*", "choice"), ("#", "multi_choice"), ("single", "choice"),
                ("Multiple-choice", "multi_choice"), (" # ", "multi_choice")]  # fmt: skip


@pytest.mark.parametrize(("marker", "kind"), MARKER_WORDS)
def test_marker_spellings(tmp_path: Path, marker: str, kind: str) -> None:
    (item,) = items_of(write(tmp_path / "m.tsv", TEST_HEADER, [row("1", "", marker)]))
    assert item.kind == kind


def test_without_markers_val_reads_the_gold_and_test_cannot_tell(tmp_path: Path) -> None:
    header = [n for n in VAL_HEADER if n != "question_type"]
    val = items_of(write(tmp_path / "VAL.tsv", header, [row(i, g, None) for i, g, _ in ROWS]))
    assert [i.kind for i in val][:3] == ["choice", "multi_choice", "choice"]
    assert answer_mode_source(val) == "gold"
    test_header = [n for n in header if n != "answer"]
    test = items_of(
        write(tmp_path / "TEST.tsv", test_header, [row(i, g, None) for i, g, _ in ROWS])
    )
    assert {i.kind for i in test} == {"choice"}
    assert answer_mode_source(test) == "none"


@pytest.mark.parametrize(
    ("gold", "marker", "problem"),
    [("AC", "*", "marked single-answer"), ("B", "?", "neither '*' (single) nor '#' (multi)")],
)
def test_bad_markers_are_one_line_input_errors(
    tmp_path: Path, gold: str, marker: str, problem: str
) -> None:
    path = write(tmp_path / "bad.tsv", VAL_HEADER, [row("1", "B", "*"), row("2", gold, marker)])
    with pytest.raises(InputError, match="row 2, field 'question_type'") as caught:
        items_of(path)
    assert problem in str(caught.value)
    result = invoke_run(f"gmai:{path}", "random", tmp_path / "runs", "bad")
    assert result.exit_code == 2
    assert "question_type" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "runs" / "bad").exists()


def _report(run: Path, fmt: str) -> str:
    result = CliRunner().invoke(app, ["report", str(run), "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.output.replace("\\", "")


def test_every_report_has_a_single_multi_line(tmp_path: Path) -> None:
    path = write(tmp_path / "VAL.tsv", VAL_HEADER, [row(*r) for r in ROWS])
    run = named_run(f"gmai:{path}", "oracle", tmp_path / "runs", "val")
    results = json.loads(_report(run, "json"))
    assert results["single_multi"]["single"] == {"n": 2, "scored": 2, "score": 1.0}
    assert results["single_multi"]["multi"]["n"] == 3
    assert results["single_multi"]["source"] == "marker"
    for fmt in ("text", "md", "html"):
        shown = " ".join(_report(run, fmt).split())
        assert "single/multi: 2 single-answer" in shown
        assert "question_type markers (* single, # multi)" in shown


def test_unmarked_test_report_says_multi_answer_items_cannot_be_told_apart(
    tmp_path: Path,
) -> None:
    header = [n for n in TEST_HEADER if n != "question_type"]
    path = write(tmp_path / "TEST.tsv", header, [row(i, g, None) for i, g, _ in ROWS])
    run = named_run(f"gmai:{path}", "random", tmp_path / "runs", "test")
    for fmt in ("text", "md", "html"):
        shown = " ".join(_report(run, fmt).split())
        assert "multi-answer items cannot be told apart" in shown
