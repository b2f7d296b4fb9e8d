"""A study board with a paper layout: the Med-CMR main table over the study's runs, its
open_all column scored by the benchmark's one rubric judge (as `board --layout medcmr --judge`
prints it), the same table `medlens board` gives on the study's runs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app
from paper_fixtures import write_medcmr
from study_fixtures import openai_spec, write_study


def test_a_layout_board_reads_the_benchmarks_judge(tmp_path: Path) -> None:
    files = write_medcmr(tmp_path / "data", {
        "base": lambda d, k, is_open: ("gold" if k % 2 else "negated") if is_open else "wrong",
        "tuned": lambda d, k, is_open: ("synonym" if k % 2 else "gold") if is_open else "right",
    })  # fmt: skip
    bench = f"medcmr:{files['bench']}"
    with serve(judge_config(JudgeReplies())) as judge:
        path = write_study(
            tmp_path / "s.toml", "s",
            {"base": f"replay:{files['base']}", "tuned": f"replay:{files['tuned']}"},
            {"cmr": bench},
            judges={"rubric": {"spec": openai_spec(judge.base_url, "judge"), "protocol": "rubric",
                               "scope": "all"}},
            boards=[{"benchmark": "cmr", "layout": "medcmr", "pairs": ["base:tuned"]}],
        )  # fmt: skip
        result = CliRunner().invoke(
            app, ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports"]
        )
    assert result.exit_code == 0, result.output
    folder = tmp_path / "studies" / "s"
    board = json.loads((folder / "boards" / "cmr.json").read_text(encoding="utf-8"))
    runs = [str(folder / "runs" / key) for key in ("base--cmr", "tuned--cmr")]
    direct = CliRunner().invoke(
        app,
        ["board", *runs, "--layout", "medcmr", "--allow-partial", "--judge", "rubric", "--json"],
    )
    assert direct.exit_code == 0, direct.output
    expected = json.loads(direct.output)
    assert board["layout"]["name"] == expected["layout"]["name"] == "medcmr"
    assert board["score_source"] == expected["score_source"] == "combined:rubric"
    rows = {row["run"]: row for row in board["layout"]["rows"] if row.get("run")}
    direct = {row["run"]: row for row in expected["layout"]["rows"] if row.get("run")}
    assert set(rows) == {"base", "tuned"}  # named by the study's model labels
    for label in rows:
        mine = {k: v for k, v in rows[label].items() if k not in ("run", "model")}
        theirs = {k: v for k, v in direct[f"{label}--cmr"].items() if k not in ("run", "model")}
        assert mine == theirs
    assert rows["tuned"]["cells"]["open_all"]["value"] is not None  # judged by the rubric judge
