"""Board presentation: rows are named by run (study label where there is one), never by model
spec; a table wider than the page is transposed or cut into parts of columns (text, markdown),
HTML headers wrap and plots scale down; the GMAI layout with --by prints each axis once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from medlens.board.align import Aligned, BoardRun
from medlens.board.build import BoardOptions, _board
from medlens.board.published import Published
from medlens.report.board import render_board

SPEC = "replay:/data/predictions/model_GMAI-MMBench_VAL.xlsx?sha256=" + "ab" * 32
DEPARTMENTS = [f"Department {k:02d} of medicine" for k in range(18)]


def wide_board(runs: int = 2, labels: dict[str, str] | None = None) -> dict[str, Any]:
    """`runs` runs of one spec over 360 items in 18 departments."""
    rng = np.random.default_rng(1)
    n = 360
    names = [f"run{k}" for k in range(runs)]
    board_runs = [BoardRun(Path(name), name, SPEC, {"benchmark": {"name": "b"}},
                           label=(labels or {}).get(name, name)) for name in names]  # fmt: skip
    aligned = Aligned(
        runs=board_runs,
        ids=np.array([f"i{k}" for k in range(n)], dtype=object),
        scores=(rng.random((runs, n)) < 0.6).astype(float),
        cluster=np.arange(n, dtype=np.intp),
        random=np.full(n, 0.25),
        meta={"department": np.array([DEPARTMENTS[k % 18] for k in range(n)], dtype=object),
              "granularity": np.array(["image" if k % 2 else "box" for k in range(n)], dtype=object)},
        dropped={name: 0 for name in names},
    )  # fmt: skip
    options = BoardOptions(runs=[], by=["department", "granularity"], n_resamples=200)
    return _board(aligned, options, Published(None))


def md_sections(text: str) -> dict[str, str]:
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {part.splitlines()[0]: part for part in parts}


def test_axis_rows_name_runs_not_the_spec_they_share() -> None:
    board = wide_board()
    sections = md_sections(str(render_board(board, "md")))
    granularity = sections["By granularity"]
    assert "| run0 |" in granularity and "| run1 |" in granularity
    assert "replay:" not in granularity and "sha256" not in granularity
    department = sections["By department"]
    assert "run0" in department.splitlines()[2] and "sha256" not in department
    html = str(render_board(board, "html"))
    forest = html[html.index('<svg class="forest"') : html.index("</svg>")]
    assert ">1. run" in forest and "sha256" not in forest


def test_study_labels_name_the_rows_where_runs_have_them() -> None:
    board = wide_board(labels={"run0": "GPT-4o", "run1": "Qwen"})
    granularity = md_sections(str(render_board(board, "md")))["By granularity"]
    assert "| GPT-4o |" in granularity and "| Qwen |" in granularity
    assert {m["label"] for m in board["models"]} == {"GPT-4o", "Qwen"}


def test_many_values_are_transposed_and_text_stays_on_the_page() -> None:
    board = wide_board()
    text = str(render_board(board, "text"))
    table_lines = [line.rstrip() for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 120
    department = md_sections(str(render_board(board, "md")))["By department"]
    rows = [line for line in department.splitlines() if line.startswith("| Department")]
    assert len(rows) == 18  # one row per department, runs as columns
    html = str(render_board(board, "html"))
    heatmap = html[html.index("<h2>Heatmap by department") :]
    heatmap = heatmap[: heatmap.index("</svg>")]
    assert 'viewBox="0 0 ' in heatmap
    assert len(re.findall(r'text-anchor="end">Department \d\d', heatmap)) == 18
    assert "th { white-space: normal; }" in html and '<div class="fit"><table' in html


def test_many_runs_and_many_values_are_cut_into_parts_of_columns() -> None:
    board = wide_board(runs=9)
    text = str(render_board(board, "text"))
    table_lines = [line.rstrip() for line in text.splitlines() if line[:1] in "┏┃┡│└"]
    assert max(len(line) for line in table_lines) <= 120
    parts = re.findall(r"By department \(columns (\d+)–(\d+) of (\d+)\)", text)
    assert len(parts) >= 2 and parts[-1][1] == parts[-1][2] == "11"  # n, 9 runs, chance
    assert text.count("│ Department 00 of medicine") == len(parts)  # the label column repeats
    assert all(f"run{k}" in text for k in range(9))


def test_columns_are_spread_evenly_over_the_parts() -> None:
    from medlens.report.board_sections import BoardTable, t
    from medlens.report.table_fit import split_wide

    headers = ["run", *(f"c{k}" for k in range(9))]
    rows = [[t("a run"), *(t("x" * 10) for _ in range(9))]]
    table = BoardTable("wide", "Wide", headers, rows, ["a note"])
    parts = split_wide(table, width=120)  # 8 columns fit, 9 do not
    assert [len(part.headers) - 1 for part in parts] == [5, 4]
    assert [part.title for part in parts] == ["Wide (columns 1–5 of 9)", "Wide (columns 6–9 of 9)"]
    assert parts[0].notes == [] and parts[1].notes == ["a note"]
    assert split_wide(table, width=200) == [table]
