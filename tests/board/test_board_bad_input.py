"""`medlens board` refusals: one line, exit 2, nothing written; and the two call sites that other
branches fill (published references, the run lock), checked through stand-in modules."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from board_runs import board_json, demo_copy, demo_runs, invoke_board, one_error_line
from cli_runs import named_run

__all__ = ["demo_runs"]


def other_benchmark_run(demo_runs: dict[str, Path], tmp_path: Path) -> Path:
    small = demo_copy(demo_runs, tmp_path / "other", "board-bad-input.jsonl", slice(40))
    return named_run(f"jsonl:{small}", "first", tmp_path, "other_bench")


def test_runs_of_different_benchmarks(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    other = other_benchmark_run(demo_runs, tmp_path)
    out = tmp_path / "board.md"
    line = one_error_line(invoke_board(demo_runs["oracle"], other, "--output", out, "-f", "md"))
    assert str(other) in line and "40 items" in line and "189 items" in line
    assert "--align intersect" in line
    assert not out.exists()
    # on the common items it works: the 40 items are the demo's first 40
    board = board_json(demo_runs["oracle"], other, "--align", "intersect")
    assert board["align"]["n"] == 40 and board["align"]["dropped"]["oracle"] == 149


def test_a_different_split_is_refused(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    copy = tmp_path / "test_split"
    shutil.copytree(demo_runs["first"], copy)
    run = json.loads((copy / "run.json").read_text())
    run["spec"]["benchmark"]["split"] = "test"
    (copy / "run.json").write_text(json.dumps(run))
    line = one_error_line(invoke_board(demo_runs["oracle"], copy, "--align", "intersect"))
    assert "split 'test'" in line and "'val'" in line


@pytest.mark.parametrize(
    ("pairs", "needle"),
    [
        ("oracle:nosuchrun", "unknown run 'nosuchrun'"),
        ("oracle-first", "cannot read 'oracle-first'"),
        ("first:first", "with itself"),
    ],
)
def test_bad_pairs(demo_runs: dict[str, Path], pairs: str, needle: str) -> None:
    line = one_error_line(invoke_board(demo_runs["oracle"], demo_runs["first"], "--pairs", pairs))
    assert needle in line and "--pairs" in line
    if "unknown" in needle:
        assert "oracle, first" in line  # the runs that exist


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("model,params_b\noracle,7\n", "line 1: no 'run' column (columns: model, params_b)"),
        (
            "run,params_b\noracle,7\nfirst,seven\n",
            "line 3: column 'params_b': 'seven' is not a number",
        ),
        ("run,params_b\noracle,7\noracle,8\n", "line 3: column 'run': 'oracle' again (line 2)"),
        ("", "empty file"),
    ],
)
def test_bad_meta_files(
    demo_runs: dict[str, Path], tmp_path: Path, content: str, needle: str
) -> None:
    meta = tmp_path / "meta.csv"
    meta.write_text(content)
    line = one_error_line(invoke_board(demo_runs["oracle"], demo_runs["first"], "--meta", meta))
    assert str(meta) in line and needle in line


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--by", "organ"], "--by: unknown axis 'organ'"),
        (["--where", "nonsense"], "--where: cannot read 'nonsense'"),
        (["--where", "granularity=none"], "--where matches no item (known values: granularity: "),
        (["--format", "pdf"], "--format: unknown format 'pdf'"),
        (["--format", "xlsx"], "give --output FILE"),
        (["--base", "first"], "--base goes with --across"),
        (["--align", "union"], "--align: unknown mode 'union'"),
        (["--resamples", "10"], "--resamples"),
    ],
)
def test_bad_options(demo_runs: dict[str, Path], extra: list[str], needle: str) -> None:
    line = one_error_line(invoke_board(demo_runs["oracle"], demo_runs["first"], *extra))
    assert needle in line


def test_not_a_run_and_two_runs_with_one_name(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    line = one_error_line(invoke_board(demo_runs["oracle"], tmp_path))
    assert f"{tmp_path}: not a medlens run directory" in line
    twin = tmp_path / "elsewhere" / "oracle"
    shutil.copytree(demo_runs["oracle"], twin)
    line = one_error_line(invoke_board(demo_runs["oracle"], twin))
    assert "two runs are named 'oracle'" in line


def test_across_refuses_two_runs_of_one_model_on_one_benchmark(
    demo_runs: dict[str, Path], tmp_path: Path
) -> None:
    again = named_run("demo", "first", tmp_path, "first_again")
    line = one_error_line(invoke_board(demo_runs["first"], again, "--across"))
    assert "both first on demo" in line
    line = one_error_line(invoke_board(demo_runs["first"], "--across", "--by", "granularity"))
    assert "--by does not apply to --across" in line


def test_a_run_being_written_is_refused(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    """A real second process holds the run's write lock (as `medlens run` does) while we board."""
    import subprocess

    busy = demo_runs["random_1"]
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys; from pathlib import Path; from medlens.runs.lock import hold_run_lock\n"
         f"with hold_run_lock(Path({str(busy)!r}), 'medlens run'):\n"
         "    print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        out = tmp_path / "board.html"
        result = invoke_board(demo_runs["oracle"], busy, "--format", "html", "--output", out)
        line = one_error_line(result)
        assert str(busy) in line and f"PID {holder.pid}" in line and "medlens run" in line
        assert not out.exists()
    finally:
        holder.communicate("", timeout=60)
    assert invoke_board(demo_runs["oracle"], busy).exit_code == 0


def test_references_are_shown_unranked_in_every_format(tmp_path: Path) -> None:
    """The published GMAI-MMBench VAL leaderboard (medlens.analysis.references) beside GMAI runs."""
    from medlens.analysis.references import load_reference
    from provenance_fixture import write_gmai_choice_tsv

    bench = f"gmai:{write_gmai_choice_tsv(tmp_path / 'data', 30)}"
    oracle = named_run(bench, "oracle", tmp_path / "runs", "oracle")
    first = named_run(bench, "first", tmp_path / "runs", "first")
    published = load_reference("gmai-val").rows
    args = [
        oracle,
        first,
        "--reference",
        "gmai-val",
        "--allow-partial",
    ]  # the fixture is not the official file
    board = board_json(*args)
    assert [r["model"] for r in board["references"]] == [r.model for r in published]
    assert "GPT-4o" in [r["model"] for r in board["references"]]
    assert all(r["ranked"] is False for r in board["references"])
    assert sorted(m["run"] for m in board["models"]) == ["first", "oracle"]  # not among the ranks
    text = " ".join(invoke_board(*args).stdout.split())
    assert "GPT-4o (published)" in text and "unranked" in text
    assert "GPT-4o (published)" in invoke_board(*args, "-f", "md").stdout
    html_path = tmp_path / "b.html"
    assert invoke_board(*args, "-f", "html", "-o", html_path).exit_code == 0
    assert "GPT-4o (published)" in html_path.read_text()
    from openpyxl import load_workbook

    book_path = tmp_path / "b.xlsx"
    assert invoke_board(*args, "-f", "xlsx", "-o", book_path).exit_code == 0
    cells = [row for row in load_workbook(book_path)["models"].iter_rows(values_only=True)]
    assert any(
        str(row[0]).startswith("GPT-4o (published)") and row[2] == "unranked" for row in cells
    )


def test_references_of_another_benchmark_are_refused(demo_runs: dict[str, Path]) -> None:
    line = one_error_line(invoke_board(demo_runs["oracle"], "--reference", "gmai-val"))
    assert "not comparable with reference gmai-val" in line and "a demo run" in line


def test_an_unknown_reference_is_one_line(demo_runs: dict[str, Path]) -> None:
    line = one_error_line(invoke_board(demo_runs["oracle"], "--reference", "gmai-vall"))
    assert "gmai-vall" in line and "gmai-val" in line
