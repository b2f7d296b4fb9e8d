"""Fail-closed judging: a judge reply that is an error, empty, cut at the token limit,
unparseable or outside the protocol's scale is asked once more, then left out and counted per
slice; it never becomes a score, and never moves any other item's score (EvalScope #1575 scored
error strings as full credit)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import FAILURE_KINDS, JudgeReplies, judge_config, read_block
from loopback_server import serve
from medlens.cli import app
from medlens.core.items import Item
from medlens.judges.protocols import CHOICE, EQUIVALENCE, RUBRIC
from medlens.judges.replies import read_reply
from medlens.models.base import ModelError, Response

ITEM = Item(id="1", question="Which organ?", kind="choice", options={"A": "liver", "B": "lung"},
            answer="B")  # fmt: skip


def test_ten_percent_of_each_failure_kind_leaves_exactly_the_parsed_verdicts(
    tmp_path: Path,
) -> None:
    run = finished_run(tmp_path, n_open=200, n_closed=0)
    replies = JudgeReplies("faults")
    with serve(judge_config(replies)) as server:
        spec = judge_spec(server.base_url, max_retries="0")
        result = CliRunner().invoke(
            app, ["judge", str(run), "--judge", spec, "--protocol", "equivalence",
                  "--scope", "all", "--with-question", "--no-cache"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = {line["id"]: line for line in judgement_lines(run / "judges" / "judge-model")}
    assert len(lines) == 200
    questions = {
        json.loads(raw)["question"]: json.loads(raw)["id"]
        for raw in (run / "items.jsonl").read_text().splitlines()
    }
    injected = {questions[read_block(text, "QUESTION")]: kind  # type: ignore[index]
                for text, kind in replies.injected.items()}  # fmt: skip
    counts = Counter(injected.values())
    assert all(12 <= counts[kind] <= 30 for kind in (*FAILURE_KINDS, "flaky")), counts
    for item, line in lines.items():
        kind = injected.get(item)
        if kind is None or kind == "flaky":  # a flaky first attempt: the retry gave the verdict
            assert line["status"] == "ok" and line["score"] in (0.0, 1.0), line
        else:
            assert line["score"] is None and line["failure"] == kind, (kind, line)
    asked = Counter(replies.calls.values())
    assert asked == {1: 200 - len(injected), 2: len(injected)}  # each failure asked twice
    parsed = [line["score"] for line in lines.values() if line["status"] == "ok"]
    report = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    entry = json.loads(report.output)["judges"]["judge-model"]
    overall = entry["overall"]
    assert overall["score"] == sum(parsed) / len(parsed)  # exactly: nothing else moved
    assert overall["n"] == len(parsed)
    failed = Counter(kind for kind in injected.values() if kind != "flaky")
    assert overall["judge_failures"] == dict(failed)
    assert overall["judge_errors"] == sum(failed.values())
    by_modality: dict[str, Counter[str]] = {}
    for raw in (run / "items.jsonl").read_text().splitlines():
        item = json.loads(raw)
        kind = injected.get(item["id"])
        if kind and kind != "flaky":
            by_modality.setdefault(item["meta"]["modality"], Counter())[kind] += 1
    for modality, cell in entry["by"]["modality"].items():
        assert cell["judge_failures"] == dict(by_modality[modality])
    assert entry["replies"]["failures"] == dict(failed)
    text = " ".join(CliRunner().invoke(app, ["report", str(run)]).output.split())
    assert f"{sum(failed.values())} items without a verdict are left out" in text


@pytest.mark.parametrize(
    ("text", "finish", "failure"),
    [
        ('[ERROR] model-x 500 {"equivalent": true}', "stop", "error"),
        ("error: upstream returned 502", "stop", "error"),
        ("", "stop", "empty"),
        ("   \n", "stop", "empty"),
        ('I think {"equivalent": tr', "length", "truncated"),
        ('{"equivalent": true}', "length", "truncated"),  # cut after a verdict: not trusted
        ('{"equivalent": 90}', "stop", "out_of_scale"),
        ('{"equivalent": NaN}', "stop", "out_of_scale"),
        ("Equivalent: yes", "stop", "unparseable"),
    ],
)
def test_every_failure_kind_is_a_failure_never_a_score(
    text: str, finish: str, failure: str
) -> None:
    parsed = read_reply(EQUIVALENCE, ITEM, Response(text, finish_reason=finish))
    assert parsed.status != "ok" and parsed.score is None and parsed.failure == failure


def test_transport_errors_and_rubric_and_choice_scales() -> None:
    error = read_reply(EQUIVALENCE, ITEM, Response(None, error=ModelError("server", "HTTP 500")))
    assert (error.status, error.failure) == ("error", "error")
    dims = ["consistency", "coherence", "visual_accuracy", "ground_truth_correctness"]
    for bad in (90, float("nan"), -1, 11):
        reply = json.dumps({**dict.fromkeys(dims, 5), "coherence": bad})
        parsed = read_reply(RUBRIC, ITEM, Response(reply))
        assert parsed.failure == "out_of_scale" and parsed.score is None, bad
    assert read_reply(RUBRIC, ITEM, Response(json.dumps(dict.fromkeys(dims, 5.5)))).failure == (
        "unparseable"
    )
    assert read_reply(CHOICE, ITEM, Response('{"answer": "E"}')).failure == "out_of_scale"
    assert read_reply(CHOICE, ITEM, Response('{"answer": "B"}')).score == 1.0
    fine = read_reply(RUBRIC, ITEM, Response(json.dumps(dict.fromkeys(dims, 5))))
    assert fine.status == "ok" and fine.score == pytest.approx(0.5)
