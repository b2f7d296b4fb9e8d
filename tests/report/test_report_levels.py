"""`report --by` and `slice --by tree:LEVEL`: levels, parent → child, each row with n and CI, from
one implementation (issue 33 item 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from data_paths import realdata_dir
from gmai_fixture import write_gmai_tsv
from items_fixtures import one_error_line
from medlens.cli import app

runner = CliRunner()


def invoke(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def gmai_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("gmai")
    write_gmai_tsv(folder / "val.tsv", n_rows=40)
    return named_run(f"gmai:{folder / 'val.tsv'}", "random", folder / "runs", "g")


def test_report_by_a_tree_level_lists_parents_then_children_with_n_and_ci(gmai_run: Path) -> None:
    text = invoke("report", str(gmai_run), "--by", "tree:l2-category")
    section = text[text.index("by category → l2-category") :].splitlines()
    assert section[1].startswith("  Anatomy") and "n=34" in section[1]
    assert section[2].startswith("    → Body region") and "n=34" in section[2]
    assert section[3].startswith("  Multiple findings *") and "n=6" in section[3]
    assert section[4].startswith("    → Statements *") and "95% CI" in section[4]
    levels = json.loads(invoke("report", str(gmai_run), "--by", "tree:l2-category", "--json"))
    assert levels["levels"]["by"] == ["category", "l2-category"]
    rows = levels["levels"]["rows"]
    assert [(r["depth"], r["value"]) for r in rows] == [
        (0, "Anatomy"), (1, "Body region"), (0, "Multiple findings"), (1, "Statements")]  # fmt: skip
    sliced = json.loads(invoke("slice", str(gmai_run), "--by", "tree:l2-category", "--json"))
    assert sliced["levels"] == rows  # one implementation: the same rows, n and intervals
    cells = {json.dumps(c["key"], sort_keys=True): c for c in sliced["cells"]}
    for row in rows:
        assert cells[json.dumps(row["key"], sort_keys=True)]["ci"] == row["ci"]
    assert "by category → l2-category" in invoke("slice", str(gmai_run), "--by", "tree:l2-category")


def test_real_vqa_rad_levels_nest_and_children_add_up_to_their_parent(tmp_path: Path) -> None:
    run = named_run(f"vqa-rad:{realdata_dir('vqa_rad')}", "first", tmp_path / "runs", "v")
    data = json.loads(invoke("report", str(run), "--by", "answer_type,question_type", "--json"))
    rows = data["levels"]["rows"]
    parents = [r for r in rows if r["depth"] == 0]
    assert sorted(r["value"] for r in parents) == ["closed", "open"]
    assert sum(r["n"] for r in parents) == 451
    for parent in parents:
        children = [
            r for r in rows if r["depth"] == 1 and r["key"]["answer_type"] == parent["value"]
        ]
        assert children and sum(c["n"] for c in children) == parent["n"]
        assert all(c["ci"][0] <= c["score"] <= c["ci"][1] for c in children)


def test_markdown_and_html_levels_are_escaped_and_xlsx_is_refused(tmp_path: Path) -> None:
    path = write_jsonl_benchmark(tmp_path, 40)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for index, row in enumerate(rows):
        row["meta"]["category"] = "<b>bold</b>" if index % 2 else "plain"
        row["meta"]["l2-category"] = f"sub {index % 3}"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = named_run(f"jsonl:{path}", "random", tmp_path / "runs", "j")
    md = invoke("report", str(run), "--by", "tree:l2-category", "-f", "md")
    assert "## by category → l2-category" in md and "| plain" in md
    assert "<b>" not in md.split("## by category")[1]
    html = invoke("report", str(run), "--by", "tree:l2-category", "-f", "html")
    section = html.split("<h2>by category → l2-category</h2>")[1]
    assert "&lt;b&gt;bold&lt;/b&gt;" in section and "<b>bold" not in section
    assert html.rstrip().endswith("</html>")
    out = tmp_path / "r.xlsx"
    line = one_error_line(runner.invoke(app, ["report", str(run), "--by", "category", "-f",
                                              "xlsx", "-o", str(out)]))  # fmt: skip
    assert "--by" in line and "xlsx" in line and not out.exists()


def test_board_by_a_tree_level_tables_each_level(gmai_run: Path, tmp_path: Path) -> None:
    other = named_run(f"gmai:{gmai_run.parent.parent / 'val.tsv'}", "first", tmp_path, "f")
    board = json.loads(invoke("board", str(gmai_run), str(other), "--by", "tree:l2-category",
                              "--json"))  # fmt: skip
    assert list(board["by"]) == ["category", "l2-category"]
    assert set(board["by"]["l2-category"]) == {"Body region", "Statements"}
