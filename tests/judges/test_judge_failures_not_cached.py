"""Judge failures are never answers (issue 30, item 2): a reply without a verdict leaves the
response cache, a rerun asks a transport failure again, and ``judge --retry-errors`` asks every
judgement without a verdict again — live, not from the cache."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import ChatRequest, serve
from medlens.cli import app


def judge(run: Path, base_url: str, *extra: str) -> None:
    result = CliRunner().invoke(app, ["judge", str(run), "--judge", judge_spec(base_url, max_retries="0"),
                                      "--protocol", "equivalence", *extra])  # fmt: skip
    assert result.exit_code == 0, result.output


def statuses(run: Path) -> dict[str, str]:
    return {str(line["id"]): str(line["status"]) for line in judgement_lines(run / "judges" / "judge-model")
            if line["by"] == "judge"}  # fmt: skip


class ErrorText:
    """A judge behind a proxy that answers an error text (HTTP 200) until the judge recovers."""

    def __init__(self) -> None:
        self.failing = True
        self.judge = JudgeReplies("verdict")

    def __call__(self, request: ChatRequest) -> object:
        if self.failing:
            return "[ERROR] judge-model 500 Internal Server Error from http://127.0.0.1:1/v1"
        return self.judge(request)


def test_an_error_text_is_asked_again_on_rerun_not_read_back_from_the_cache(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=0)
    replies = ErrorText()
    with serve(judge_config(replies)) as server:
        judge(run, server.base_url)
        assert set(statuses(run).values()) == {"error"}
        replies.failing = False  # the judge recovered
        judge(run, server.base_url)  # the cache held the error text: it must not answer again
    after = statuses(run)
    assert set(after.values()) == {"ok"}
    assert not any(line.get("cached") for line in judgement_lines(run / "judges" / "judge-model"))


def test_retry_errors_asks_unparseable_replies_again_live(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=0)
    replies = JudgeReplies("unparseable")
    with serve(judge_config(replies)) as server:
        judge(run, server.base_url)
        asked = sum(replies.calls.values())
        assert set(statuses(run).values()) == {"unparseable"}
        replies.mode = "verdict"
        judge(run, server.base_url)  # a plain rerun: the judge's reading stands
        assert sum(replies.calls.values()) == asked
        judge(run, server.base_url, "--retry-errors")
        assert set(statuses(run).values()) == {"ok"}
        assert sum(replies.calls.values()) == asked + len(statuses(run))  # asked live, once each
