"""`medlens board` refusals: one line, exit 2, nothing written; and the two call sites that other
branches fill (published references, the run lock), checked through stand-in modules."""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path

import pytest

from board_runs import board_json, demo_runs, invoke_board, one_error_line
from cli_runs import named_run

__all__ = ["demo_runs"]


def other_benchmark_run(demo_runs: dict[str, Path], tmp_path: Path) -> Path:
    lines = (demo_runs["oracle"] / "items.jsonl").read_text().splitlines()
    image = Path(json.loads(lines[0])["images"][0]["path"])
    small = image.parent.parent / "board-bad-input.jsonl"
    small.write_text("\n".join(lines[:40]) + "\n")
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
        (["--where", "granularity=none"], "no item is scored by every run and matches --where"),
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


def test_a_run_being_written_is_refused(
    demo_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 10's `medlens.runlock.lock_holder`, stood in for by a module that names a holder."""
    busy = demo_runs["random_1"]
    runlock = types.ModuleType("medlens.runlock")
    runlock.lock_holder = lambda run_dir: (  # type: ignore[attr-defined]
        "pid 4242 on host-a: medlens run" if Path(run_dir) == busy else None
    )
    monkeypatch.setitem(sys.modules, "medlens.runlock", runlock)
    out = tmp_path / "board.html"
    result = invoke_board(demo_runs["oracle"], busy, "--format", "html", "--output", out)
    line = one_error_line(result)
    assert str(busy) in line and "pid 4242 on host-a: medlens run" in line
    assert not out.exists()
    assert invoke_board(demo_runs["oracle"], demo_runs["first"]).exit_code == 0


def test_references_are_shown_unranked_in_every_format(
    demo_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Issue 16's `medlens.references.load_references`, stood in for by a module with two rows."""
    references = types.ModuleType("medlens.references")
    rows = [{"model": "GPT-4V", "score": 0.42, "split": "val", "source": "GMAI-MMBench Table 3"},
            {"model": "<b>Med</b>", "score": 0.3, "split": "val", "source": "paper"}]  # fmt: skip
    references.load_references = lambda name: rows if name == "gmai-val" else []  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "medlens.references", references)
    args = [demo_runs["oracle"], demo_runs["first"], "--reference", "gmai-val"]
    board = board_json(*args)
    assert [r["model"] for r in board["references"]] == ["GPT-4V", "<b>Med</b>"]
    assert all(r["ranked"] is False for r in board["references"])
    assert [m["run"] for m in board["models"]] == ["oracle", "first"]  # not among the ranks
    text = " ".join(invoke_board(*args).stdout.split())
    assert "GPT-4V (published)" in text and "unranked" in text
    assert "GPT-4V (published)" in invoke_board(*args, "-f", "md").stdout
    html_path = tmp_path / "b.html"
    assert invoke_board(*args, "-f", "html", "-o", html_path).exit_code == 0
    page = html_path.read_text()
    assert "GPT-4V (published)" in page and "&lt;b&gt;Med&lt;/b&gt;" in page
    assert "<b>Med</b>" not in page
    from openpyxl import load_workbook

    book_path = tmp_path / "b.xlsx"
    assert invoke_board(*args, "-f", "xlsx", "-o", book_path).exit_code == 0
    cells = [row for row in load_workbook(book_path)["models"].iter_rows(values_only=True)]
    assert cells[4][:3] == ("GPT-4V (published)", "GMAI-MMBench Table 3", "unranked")


def test_reference_without_the_provenance_module(
    demo_runs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "medlens.references", None)  # import fails
    line = one_error_line(invoke_board(demo_runs["oracle"], "--reference", "gmai-val"))
    assert "--reference gmai-val" in line
