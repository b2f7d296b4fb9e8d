"""Board internals on synthetic score matrices: the JSON object, its layout in text, markdown and
xlsx (hostile run names stay inert), ranks of identical runs, difficulty, pair and meta parsing."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medlens.board.across import benchmark_label
from medlens.board.align import Aligned, BoardRun
from medlens.board.build import BoardOptions, _board
from medlens.board.difficulty import difficulty, solved_ids_text
from medlens.board.meta import read_meta
from medlens.board.pairs import parse_pairs
from medlens.board.published import Published
from medlens.board.ranks import rank_intervals, ranks_of
from medlens.core.errors import InputError, SpecError
from medlens.report.board import render_board
from medlens.report.board_sections import group_letters

HOSTILE = ['=HYPERLINK("http://x")', "a|b*c_<i>", "plain"]


def aligned_of(scores: np.ndarray, names: list[str] | None = None) -> Aligned:
    runs, n = scores.shape
    names = names or [f"r{i}" for i in range(runs)]
    return Aligned(
        runs=[BoardRun(Path(name), name, f"model {name}", {"benchmark": {"name": "b"}})
              for name in names],
        ids=np.array([f"i{k}" for k in range(n)], dtype=object),
        scores=scores.astype(float),
        cluster=np.arange(n, dtype=np.intp),
        random=np.full(n, 0.25),
        meta={"task": np.array(["t1" if k % 2 else "t2" for k in range(n)], dtype=object)},
        dropped={name: 0 for name in names},
    )  # fmt: skip


def hostile_board() -> dict[str, Any]:
    rng = np.random.default_rng(0)
    scores = (rng.random((3, 120)) < [[0.9], [0.5], [0.45]]).astype(float)
    aligned = aligned_of(scores, HOSTILE)
    options = BoardOptions(runs=[], by=["task"], pairs=f"{HOSTILE[2]}:{HOSTILE[1]}",
                           n_resamples=200)  # fmt: skip
    return _board(aligned, options, Published(None))


def test_identical_runs_share_rank_one_in_every_resample() -> None:
    scores = np.array([[1, 0, 1, 1, 0, 1], [1, 0, 1, 1, 0, 1], [0, 0, 1, 0, 0, 1]], dtype=float)
    assert ranks_of(scores.mean(axis=1)).tolist() == [1, 1, 3]
    intervals = rank_intervals(aligned_of(scores), n_resamples=300)
    assert intervals[0].tolist() == intervals[1].tolist() and intervals[0, 0] == 1
    assert intervals[2, 1] == 3


def test_board_json_holds_every_section() -> None:
    board = hostile_board()
    assert board["models"][0]["run"] == HOSTILE[0]
    assert set(board["by"]["task"]) == {"t1", "t2"}
    assert board["pairs"][0]["base"] == "plain" and board["pair_tests"]["n"] == 2
    assert board["difficulty"]["n"] == 120 and board["chance"]["score"] == 0.25
    assert board["by_chance"]["task"] == {"t1": 0.25, "t2": 0.25}


def test_markdown_escapes_names_and_keeps_the_table_shape() -> None:
    markdown = render_board(hostile_board(), "md")
    assert isinstance(markdown, str)
    assert "a\\|b\\*c\\_\\<i\\>" in markdown and "<i>" not in markdown
    header = next(line for line in markdown.splitlines() if line.startswith("| model | run"))
    models = [line for line in markdown.splitlines() if line.startswith("| model a\\|b")]
    row = next(line for line in models if "| a\\|b" in line)  # the models table's row
    assert row.count(" | ") == header.count(" | ")


def test_xlsx_keeps_a_formula_looking_name_as_text() -> None:
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(render_board(hostile_board(), "xlsx")))  # type: ignore[arg-type]
    models = book["models"]
    cells = [c for row in models.iter_rows() for c in row if c.value == HOSTILE[0]]
    assert cells and all(c.data_type == "s" for c in cells)
    assert "item difficulty" in book.sheetnames and "solved by all" in book.sheetnames


def test_text_has_every_table_title() -> None:
    text = render_board(hostile_board(), "text")
    assert isinstance(text, str)
    for title in ("Models", "By task", "Paired families", "Tests across pairs", "Item difficulty"):
        assert title in text


def test_overlapping_tied_groups_get_letters() -> None:
    assert group_letters({"tied": [["a", "b"], ["b", "c"]]}) == {"a": "a", "b": "ab", "c": "b"}


def test_difficulty_counts_only_full_scores_as_right() -> None:
    scores = np.array([[1.0, 0.5, 0.0, 1.0], [1.0, 1.0, 0.0, 0.9]])
    d = difficulty(aligned_of(scores))
    assert (d["solved_by_all"], d["solved_by_none"]) == (1, 1)  # i0 by both, i2 by none
    assert d["per_item"] == {"i0": 1.0, "i1": 0.5, "i2": 0.0, "i3": 0.5}
    assert solved_ids_text(d["solved_by_all_ids"]) == "i0\n"


def test_parse_pairs_trims_and_keeps_order() -> None:
    assert parse_pairs(" a:b , c:a,", ["a", "b", "c"]) == [("a", "b"), ("c", "a")]
    with pytest.raises(SpecError, match="unknown run 'd'"):
        parse_pairs("a:d", ["a", "b"])


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("run,x\na,1,2\n", "line 2: 3 cells but 2 columns"),
        ("run,x\n,1\n", "line 2: column 'run': empty"),
        ("run,x\na,1\nb,inf\n", "'inf' is not a number"),
    ],
)
def test_meta_file_errors_name_line_and_column(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "m.csv"
    path.write_text(content)
    with pytest.raises(InputError, match=needle.replace("(", r"\(")):
        read_meta(path)


def test_two_benchmarks_with_one_name_are_told_apart() -> None:
    def run(name: str, digest: str) -> BoardRun:
        return BoardRun(
            Path(name), name, "m", {"benchmark": {"name": "gmai", "content_hash": digest}}
        )

    runs = [run("a", "aaaaaaaaaaaa"), run("b", "bbbbbbbbbbbb"), run("c", "aaaaaaaaaaaa")]
    assert [benchmark_label(r, runs) for r in runs] == [
        "gmai (aaaaaaaa)", "gmai (bbbbbbbb)", "gmai (aaaaaaaa)"
    ]  # fmt: skip
    assert benchmark_label(runs[0], runs[:1]) == "gmai"
