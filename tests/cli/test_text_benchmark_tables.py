"""Tables of runs on a text benchmark (real MedQA: no item has an image) show "–" for images in
slice, compare and board, as the report does, not the item count."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from medlens.cli import app


@pytest.fixture(scope="module")
def medqa_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    bench = f"medqa:{realdata_dir('medqa') / 'phrases_no_exclude_test.jsonl'}"
    out = tmp_path_factory.mktemp("runs")
    first = named_run(bench, "random?seed=1", out, "a", "--limit", "60")
    second = named_run(bench, "first", out, "b", "--limit", "60")
    return first, second


def text_of(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.stdout


def row_cells(text: str, first_cell: str) -> list[str]:
    """The cells of the table row that starts with `first_cell`."""
    for line in text.splitlines():
        cells = [c.strip() for c in re.split(r"[│|]", line)[1:-1]]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{text}")


def test_slice_shows_no_image_count(medqa_runs: tuple[Path, Path]) -> None:
    text = text_of("slice", medqa_runs[0], "--by", "task")
    cells = row_cells(text, "step1 *")  # * : n < 50
    assert cells[2] == "–", text


def test_compare_shows_no_image_count(medqa_runs: tuple[Path, Path]) -> None:
    text = text_of("compare", *medqa_runs)
    assert row_cells(text, "overall")[1:3] == ["60", "–"], text


def test_board_shows_no_image_count(medqa_runs: tuple[Path, Path]) -> None:
    text = text_of("board", *medqa_runs, "--by", "task")
    assert row_cells(text, "random?seed=1")[5] == "–", text
    count = row_cells(text, "n")[1]  # the by-task count row: "n", no "(images)"
    assert count.split()[0].isdigit() and "(" not in count, text
    md = text_of("board", *medqa_runs, "--format", "md")
    assert row_cells(md, "random?seed=1")[5] == "–", md
    board = json.loads(text_of("board", *medqa_runs, "--json"))
    assert board["imageless"] is True
