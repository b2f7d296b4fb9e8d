"""Judging a run on real VQA-RAD (shared/realdata): real images go to the judge with --images,
real answer_type drives the closed−open Δ with judged open scores."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from judge_fixtures import judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app


def test_rubric_judge_with_images_on_a_real_vqa_rad_run(tmp_path: Path) -> None:
    source = realdata_dir("vqa_rad")
    run = named_run(f"vqa-rad:{source}", "oracle", tmp_path, "vqa", "--limit", "80")
    items = {}
    for line in (run / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        items[item["id"]] = item
    answered = {json.loads(line)["id"] for line in (run / "records.jsonl").read_text().splitlines()}
    open_ids = {i for i in answered if items[i]["kind"] == "open"}
    assert open_ids
    seen_images = []
    replies = JudgeReplies()

    def judge_with_images(request):  # type: ignore[no-untyped-def]
        seen_images.append(len(request.image_urls))
        return replies(request)

    with serve(judge_config(judge_with_images)) as server:
        args = ["judge", str(run), "--judge", judge_spec(server.base_url), "--protocol", "rubric",
                "--images", "--name", "rubric"]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    assert len(seen_images) == len(open_ids) and min(seen_images) >= 1
    lines = judgement_lines(run / "judges" / "rubric")
    assert {line["id"] for line in lines} == open_ids and {line["status"] for line in lines} == {
        "ok"
    }
    report = json.loads(CliRunner().invoke(app, ["report", str(run), "-f", "json"]).output)
    entry = report["judges"]["rubric"]
    gap = entry["closed_open"]
    open_by_type = [i for i in answered if items[i]["meta"].get("answer_type") == "open"]
    assert gap["n_open"] == len(open_by_type) and gap["delta"] is not None
    assert gap["closed"] == report["closed_open"]["overall"]["closed"]
