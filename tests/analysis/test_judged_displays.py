"""Judged displays (issue 30, item 8): a board of continuous judged scores has no "solved by every
run" table, error-attribution sheets sample the answers the score source in use calls wrong,
and win shares say which side they count."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from openpyxl import load_workbook
from typer.testing import CliRunner

from judge_fixtures import finished_run
from medlens.cli import app
from medlens.runs.judgements import JudgeStore
from medlens.runs.store import RunStore

DIMS = ["consistency", "coherence", "visual_accuracy", "ground_truth_correctness"]


def rubric_stage(run: Path, points: int) -> None:
    spec = {"schema": 1, "name": "rubric", "judge": "openai:judge?base_url=x", "scope": "all", "repeats": 1,
            "protocol": {"name": "rubric", "dimensions": DIMS, "weights": dict.fromkeys(DIMS, 1.0),
                         "template_sha256": "t"}, "created": "now"}  # fmt: skip
    store = JudgeStore.open_or_create(run / "judges" / "rubric", spec)
    for k in range(20):
        value = (points + k) % 11
        store.append({"id": f"o{k}", "repeat": 0, "by": "judge", "output": "", "status": "ok",
                      "verdict": {"scores": dict.fromkeys(DIMS, value)}, "score": value / 10,
                      "error": None, "latency": 0.0, "usage": {}, "cached": False})  # fmt: skip
    store.close()


def invoke(*args: Any) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def test_a_board_of_rubric_scores_has_no_solved_by_every_run_table(tmp_path: Path) -> None:
    a = finished_run(tmp_path / "a", n_open=20, n_closed=0, name="a")
    b = finished_run(tmp_path / "b", n_open=20, n_closed=0, name="b")
    rubric_stage(a, 3)
    rubric_stage(b, 6)
    board = json.loads(invoke("board", a, b, "--score", "judge:rubric", "--json").stdout)
    assert (
        board["difficulty"]["continuous"] is True and board["difficulty"]["solved_by_all_ids"] == []
    )
    text = invoke("board", a, b, "--score", "judge:rubric").output
    assert "no item is 'solved'" in text and "solved by every run" not in text
    assert "rank intervals and tied groups are two inferences and can differ" in " ".join(
        text.split()
    )
    refused = invoke(
        "board", a, b, "--score", "judge:rubric", "--solved-by-all", tmp_path / "ids.txt"
    )
    assert refused.exit_code == 2 and not (tmp_path / "ids.txt").exists()
    rules = json.loads(invoke("board", a, b, "--json").stdout)["difficulty"]
    assert "continuous" not in rules and rules["solved_by_all"] >= 0


def test_error_sheets_sample_the_answers_the_score_source_calls_wrong(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=0)
    rubric_stage(run, 0)  # o10 scores 1.0, every other open item less
    out = tmp_path / "errors.xlsx"
    result = invoke(
        "ratings", "errors", run, "--sample", "40", "--output", out, "--score", "judge:rubric"
    )
    assert result.exit_code == 0, result.output
    sheet = load_workbook(out).worksheets[0]
    header = [c.value for c in next(sheet.iter_rows(max_row=1))]
    ids = {
        row[header.index("id")] for row in sheet.iter_rows(min_row=2, values_only=True) if row[0]
    }
    assert ids == {f"o{k}" for k in range(20)} - {"o10"}
    rule_wrong = {i for i, r in RunStore.open(run).records().items() if r["score"] < 1}
    assert ids != rule_wrong  # the rules call other answers wrong


def test_win_shares_say_which_side_they_count() -> None:
    from medlens.report.board_sections import win_share_tables

    cell = {"items": 10, "wins": 6, "ties": 2, "losses": 2, "win_share": 0.75, "ci": [0.5, 0.9]}
    entry = {"group": "medical", "versus": "general", "counts_for": "medical", "models": [2, 3],
             "overall": cell, "by": {}, "per_value": None}  # fmt: skip
    table = win_share_tables({"medical": [entry]})[0]
    assert table.headers[0] == "groups (wins of the first)"
    assert "count for the first group named (e.g. medical)" in table.notes[0]
