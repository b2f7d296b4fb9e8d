"""A 3 models × 2 benchmarks study with a judge, killed with SIGKILL mid-study and resumed by
the same command: every run completes, every item is answered once, every judgement is made
once, and the servers saw at most the requests in flight at the kill a second time.

Every server holds its answers after the first few until the test releases them, and the test
waits for those answers' lines in the run files before it kills: synchronised by the files, not
by timing.
"""

from __future__ import annotations

import json
import signal
import threading
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from study_fixtures import (
    openai_spec,
    record_ids,
    records,
    start_study,
    wait_for,
    write_shared_bench,
    write_study,
)

HELD_AFTER = 6
CONCURRENCY = 3


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def held_lines(runs: Path, models: int) -> object:
    """True once every model's first run stored the answers its server let through."""
    return lambda: all(line_count(runs / f"m{i}--a" / "records.jsonl") >= HELD_AFTER
                       for i in range(models))  # fmt: skip


def test_sigkill_mid_study_then_the_same_command_resumes_every_run_and_judge(
    tmp_path: Path,
) -> None:
    bench_a, golds_a = write_shared_bench(
        tmp_path / "a", 24, 5, prefix="a", kinds=("choice", "open")
    )
    bench_b, golds_b = write_shared_bench(tmp_path / "b", 12, 3, prefix="b")
    golds = {**golds_a, **golds_b}
    release = threading.Event()
    configs = [ServerConfig(gold=gold_by_marker(golds), accuracy=0.6, hold=release,
                            hold_after=HELD_AFTER) for _ in range(3)]  # fmt: skip
    replies = JudgeReplies(gate_after=2)
    with (
        serve(configs[0]) as s0,
        serve(configs[1]) as s1,
        serve(configs[2]) as s2,
        serve(judge_config(replies)) as judge,
    ):
        servers = [s0, s1, s2]
        study = write_study(
            tmp_path / "kill.toml", "kill",
            {f"m{i}": openai_spec(s.base_url, f"m{i}") for i, s in enumerate(servers)},
            {"a": bench_a, "b": bench_b},
            judges={"eq": {"spec": openai_spec(judge.base_url, "judge"), "protocol": "equivalence",
                           "benchmarks": ["a"]}},
            boards=[{"benchmark": "a", "pairs": ["m0:m1"]}],
        )  # fmt: skip
        args = ["study", str(study), "--out", str(tmp_path / "studies"),
                "--concurrency", str(CONCURRENCY), "--no-reports", "--no-cache"]  # fmt: skip
        runs = tmp_path / "studies" / "kill" / "runs"
        process = start_study(args)
        try:
            wait_for(held_lines(runs, 3), process)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        assert (
            json.loads((runs.parent / "study.json").read_text())["runs"]["m0--a"]["state"]
            == "running"
        )
        with open(runs / "m1--a" / "records.jsonl", "a", encoding="utf-8") as handle:
            handle.write('{"id": "a3", "output": "B", "sco')  # a torn last line
        release.set()
        replies.release.set()
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        requests = [s.stats["requests"] for s in servers]
    for model in ("m0", "m1", "m2"):
        for bench, n in (("a", 24), ("b", 12)):
            ids = record_ids(runs / f"{model}--{bench}")
            assert len(ids) == n and len(set(ids)) == n  # every item once, nothing twice
            assert all(r["error"] is None for r in records(runs / f"{model}--{bench}").values())
        judged = Counter(
            (line["id"], line["repeat"])
            for line in map(
                json.loads,
                (runs / f"{model}--a" / "judges" / "eq" / "judgements.jsonl")
                .read_text()
                .splitlines(),
            )
        )
        assert judged and set(judged.values()) == {1}
        assert not (runs / f"{model}--b" / "judges").exists()  # the judge applies to a only
    # at the kill each server had at most CONCURRENCY requests in flight; nothing else is re-sent
    assert all(36 <= n <= 36 + CONCURRENCY for n in requests), requests
    record = json.loads((runs.parent / "study.json").read_text())
    assert {r["state"] for r in record["runs"].values()} == {"done"}
    assert {j["state"] for j in record["judges"].values()} == {"done"}
    assert (runs.parent / "boards" / "a.html").is_file()
    assert (runs.parent / "study.html").is_file() and (runs.parent / "study.md").is_file()


def test_ctrl_c_stops_every_job_with_its_answers_stored_and_exits_130(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 20, 4, prefix="a")
    release = threading.Event()
    configs = [ServerConfig(gold=gold_by_marker(golds), hold=release, hold_after=HELD_AFTER)
               for _ in range(2)]  # fmt: skip
    with serve(configs[0]) as s0, serve(configs[1]) as s1:
        study = write_study(tmp_path / "int.toml", "int",
                            {"m0": openai_spec(s0.base_url), "m1": openai_spec(s1.base_url)},
                            {"a": bench})  # fmt: skip
        args = ["study", str(study), "--out", str(tmp_path / "studies"), "--concurrency", "2",
                "--no-reports", "--no-cache"]  # fmt: skip
        runs = tmp_path / "studies" / "int" / "runs"
        process = start_study(args)
        try:
            wait_for(held_lines(runs, 2), process)
            process.send_signal(signal.SIGINT)
            release.set()  # the held answers arrive; each job sees the stop at its next one
            _, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
        assert process.returncode == 130, stderr
        assert "interrupted; rerun the same command to resume" in stderr
        record = json.loads((runs.parent / "study.json").read_text())
        assert record["stop"] == {"message": "interrupted"}
        assert {r["state"] for r in record["runs"].values()} <= {"stopped", "done"}
        stored = {f"m{i}": set(record_ids(runs / f"m{i}--a")) for i in range(2)}
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    for i in range(2):
        ids = record_ids(runs / f"m{i}--a")
        assert sorted(ids) == sorted(golds) and stored[f"m{i}"] <= set(ids)
