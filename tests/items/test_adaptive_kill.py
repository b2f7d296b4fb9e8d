"""An adaptive run killed with SIGKILL in the middle of a batch, against a real loopback model
server, resumes with the same command to the same items in the same order and the same
estimate as a run that was never interrupted.

The server answers the first HELD_AFTER requests and holds the rest until the test releases
them; the test kills once those answers are in records.jsonl (synchronised by the file, not by
timing). HELD_AFTER is not a multiple of the batch size, so the kill lands inside a batch.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from items_fixtures import invoke, write_bench, write_runs
from loopback_server import ServerConfig, gold_by_marker, serve

BATCH = 4
HELD_AFTER = 43


def line_count(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.is_file() else 0


def arguments(bench: Path, bank: Path, url: str, out: Path) -> list[str]:
    model = f"openai:m?base_url={url}&max_retries=6&backoff=0.002&backoff_max=0.02"
    return ["run", "--bench", f"jsonl:{bench}", "--model", model, "--adaptive", str(bank),
            "--target-halfwidth", "0.07", "--concurrency", str(BATCH), "--no-cache",
            "--out", str(out), "--name", "a"]  # fmt: skip


def design(run: Path) -> tuple[list[str], dict[str, object]]:
    asked = json.loads((run / "run.json").read_text())["adaptive"]["asked"]
    found = json.loads(invoke("estimate", run, "--json").stdout)
    return [row["id"] for row in asked], found


@pytest.mark.slow
def test_a_run_killed_in_a_batch_resumes_to_the_same_items_and_estimate(tmp_path: Path) -> None:
    bench = write_bench(tmp_path / "bench", 200, marked=True)
    golds = {
        json.loads(line)["id"]: json.loads(line)["answer"]
        for line in bench.read_text().splitlines()
    }
    runs = write_runs(tmp_path / "runs", bench, (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5))
    bank = tmp_path / "bank.json"
    assert invoke("items", "fit", *runs, "--output", bank).exit_code == 0
    release = threading.Event()
    held = ServerConfig(
        gold=gold_by_marker(golds), accuracy=0.7, hold=release, hold_after=HELD_AFTER
    )
    with (
        serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.7)) as plain,
        serve(held) as server,
    ):
        reference = invoke(*arguments(bench, bank, plain.base_url, tmp_path / "ref"))
        assert reference.exit_code == 0, reference.output
        args = arguments(bench, bank, server.base_url, tmp_path / "killed")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        process = subprocess.Popen([sys.executable, "-m", "medlens", *args], env=env, text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
        records = tmp_path / "killed" / "a" / "records.jsonl"
        try:
            deadline = time.monotonic() + 120  # a bound on a hung test, not a timing assumption
            while line_count(records) < HELD_AFTER:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline, "the run never got that far"
                time.sleep(0.05)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
            process.communicate()
        recorded = json.loads((tmp_path / "killed" / "a" / "run.json").read_text())["adaptive"]
        assert recorded["status"] == "running" and len(recorded["asked"]) % BATCH == 0
        assert len(recorded["asked"]) > HELD_AFTER  # the kill landed inside a recorded batch
        release.set()
        resumed = invoke(*args)
        assert resumed.exit_code == 0, resumed.output
    expected_ids, expected = design(tmp_path / "ref" / "a")
    got_ids, found = design(tmp_path / "killed" / "a")
    assert got_ids == expected_ids
    assert found == expected
    ids = [json.loads(line)["id"] for line in records.read_text().splitlines()]
    assert sorted(ids) == sorted(expected_ids)  # every asked item answered once
