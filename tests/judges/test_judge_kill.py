"""A judge stage killed with SIGKILL mid-way resumes and judges every item exactly once.

The judge server holds every call after the eighth until the test releases it, and the test
waits for the eighth judgement line in the file before killing: synchronised by the file, not by
timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app

HELD_AFTER = 8


def wait_for_lines(file: Path, count: int, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120  # a bound on a hung test, not a timing assumption
    while time.monotonic() < deadline:
        if file.is_file() and file.read_bytes().count(b"\n") >= count:
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError(f"{file} never reached {count} lines")


def test_sigkill_mid_judging_then_resume_judges_each_item_once(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=20, n_closed=0)
    replies = JudgeReplies(gate_after=HELD_AFTER)
    folder = run / "judges" / "k"
    with serve(judge_config(replies)) as server:
        args = ["judge", str(run), "--judge", judge_spec(server.base_url), "--protocol", "rubric",
                "--name", "k", "--concurrency", "4"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        process = subprocess.Popen(
            [sys.executable, "-m", "medlens", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            wait_for_lines(folder / "judgements.jsonl", HELD_AFTER, process)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        before = judgement_lines(folder)
        assert HELD_AFTER <= len(before) < 20
        with open(folder / "judgements.jsonl", "a", encoding="utf-8") as handle:
            handle.write('{"id": "o19", "repeat": 0, "by": "ju')  # a torn last line
        replies.release.set()
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    lines = judgement_lines(folder)
    counts = Counter((line["id"], line["repeat"]) for line in lines)
    assert len(counts) == 20 and set(counts.values()) == {1}
    assert {line["status"] for line in lines} == {"ok"}
    assert lines[: len(before)] == before  # the judged part was kept, not redone
