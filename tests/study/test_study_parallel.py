"""Runs on different endpoints proceed at the same time, runs on one endpoint take turns, and a
judge starts on a finished run while other runs still answer.

Each claim is checked by making the study impossible to finish otherwise: a server holds its
answers until another server has been asked something (an event, not a sleep). A scheduler
that ran the jobs one after another would wait there until the held server's lifetime ends,
and the study would fail.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from typer.testing import CliRunner

from judge_server import JudgeReplies, judge_config
from loopback_server import ChatRequest, ServerConfig, gold_by_marker, serve
from medlens.cli import app
from study_fixtures import openai_spec, record_ids, write_shared_bench, write_study

HELD_FOR = 60.0
"""A held server gives up (and the study fails) after this long: only reached if the claim is false."""


def run_study(tmp_path: Path, path: Path, *extra: str) -> None:
    args = ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports", "--no-cache",
            "--concurrency", "2", *extra]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_runs_on_different_endpoints_answer_at_the_same_time(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 10, 2)
    b_asked = threading.Event()
    waiting = ServerConfig(gold=gold_by_marker(golds), hold=b_asked, lifetime=HELD_FOR)
    other = ServerConfig(gold=gold_by_marker(golds), arrived=b_asked)
    with serve(waiting) as a, serve(other) as b:
        path = write_study(tmp_path / "p.toml", "p",
                           {"first": openai_spec(a.base_url, retries=0),
                            "second": openai_spec(b.base_url, retries=0)},
                           {"a": bench})  # fmt: skip
        run_study(tmp_path, path)
    runs = tmp_path / "studies" / "p" / "runs"
    assert len(record_ids(runs / "first--a")) == len(record_ids(runs / "second--a")) == 10


class Sequence:
    """The (model, benchmark prefix) of each request, in arrival order."""

    def __init__(self, golds: dict[str, str]) -> None:
        self.lookup = gold_by_marker(golds)
        self.seen: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str | None:
        marker = request.text.split("[[", 1)[1][:1]
        with self.lock:
            self.seen.append((str(request.body["model"]), marker))
        return self.lookup(request)


def test_runs_on_one_endpoint_take_turns(tmp_path: Path) -> None:
    bench_a, golds_a = write_shared_bench(tmp_path / "a", 12, 3, prefix="a")
    bench_b, golds_b = write_shared_bench(tmp_path / "b", 8, 2, prefix="b")
    sequence = Sequence({**golds_a, **golds_b})
    # answers take a while, so that a scheduler that let two runs share the endpoint would
    # interleave them (the scheduler wakes every 0.25 s); the passing case needs no timing
    with serve(ServerConfig(gold=sequence, latency=0.2)) as server:
        models = {"one": openai_spec(server.base_url, "model-one"),
                  "two": openai_spec(server.base_url, "model-two")}  # fmt: skip
        path = write_study(tmp_path / "t.toml", "t", models, {"a": bench_a, "b": bench_b})
        run_study(tmp_path, path, "--concurrency", "4")
    blocks = [sequence.seen[0]]
    for step in sequence.seen[1:]:
        if step != blocks[-1]:
            blocks.append(step)
    # one run at a time, in the plan's order: never two runs' requests interleaved
    assert blocks == [
        ("model-one", "a"),
        ("model-one", "b"),
        ("model-two", "a"),
        ("model-two", "b"),
    ]
    record = json.loads((tmp_path / "studies" / "t" / "study.json").read_text())
    assert {run["lane"] for run in record["plan"]["runs"].values()} == {f"openai {server.base_url}"}


def test_a_judge_starts_on_a_finished_run_while_other_runs_answer(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 12, 3, kinds=("open",))
    judged = threading.Event()
    fast = ServerConfig(gold=gold_by_marker(golds), accuracy=0.5)
    slow = ServerConfig(gold=gold_by_marker(golds), hold=judged, hold_after=2, lifetime=HELD_FOR)
    with (
        serve(fast) as a,
        serve(slow) as b,
        serve(judge_config(JudgeReplies(), arrived=judged)) as j,
    ):
        path = write_study(
            tmp_path / "j.toml", "j", {"fast": openai_spec(a.base_url, retries=0),
                                  "slow": openai_spec(b.base_url, retries=0)},
            {"a": bench}, judges={"eq": {"spec": openai_spec(j.base_url, "judge"),
                                         "protocol": "equivalence"}},
        )  # fmt: skip
        run_study(tmp_path, path)
    record = json.loads((tmp_path / "studies" / "j" / "study.json").read_text())
    assert record["judges"]["fast--a/eq"]["state"] == "done"
    assert record["judges"]["slow--a/eq"]["state"] == "done"
    assert record["judges"]["fast--a/eq"]["calls"] > 0
