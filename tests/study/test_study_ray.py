"""--executor ray: the study's runs and judges as Ray tasks on a cluster the test starts itself
(``ray start --head --block`` in a temporary folder, stopped by its process id), with the same
records and judgements as the local executor; an unreachable address refuses the study."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.study.ray_jobs import STOP_FILE
from study_fixtures import openai_spec, records, write_shared_bench, write_study

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
"""Ray ≥ 2.50 starts clusters with token authentication; this cluster is local to the test, so
it and its driver (a `medlens study` process of its own: Ray's settings stay out of the test's
process, where other tests start clusters of their own) turn it off."""


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A 2-CPU head node of our own; its address."""
    ray_bin = Path(sys.executable).with_name("ray")
    temp = tempfile.mkdtemp(prefix="mlray", dir="/tmp")  # unix socket paths must stay short
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **RAY_ENV}
    process = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
         f"--temp-dir={temp}", "--include-dashboard=false", "--disable-usage-stats",
         "--object-store-memory=100000000", "--node-ip-address=127.0.0.1"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while subprocess.run([str(ray_bin), "status", f"--address={address}"], env=env,
                             capture_output=True).returncode != 0:  # fmt: skip
            assert process.poll() is None, "ray start --head exited"
            assert time.monotonic() < deadline, "the Ray head never came up"
            time.sleep(0.5)
        yield address
    finally:
        process.send_signal(signal.SIGTERM)  # the head stops what it started
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)  # our own session only
            process.wait(timeout=30)


def study(args: list[str], executor: str, address: str) -> None:
    """The study in-process (local), or as its own process (ray, see RAY_ENV)."""
    if executor == "local":
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **RAY_ENV}
    command = [
        sys.executable,
        "-m",
        "medlens",
        *args,
        "--executor",
        "ray",
        "--ray-address",
        address,
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr


def test_a_study_on_ray_makes_the_runs_and_judgements_a_local_study_makes(
    tmp_path: Path, cluster: str
) -> None:
    bench_a, golds_a = write_shared_bench(
        tmp_path / "a", 16, 4, prefix="a", kinds=("choice", "open")
    )
    bench_b, golds_b = write_shared_bench(tmp_path / "b", 10, 2, prefix="b")
    golds = {**golds_a, **golds_b}
    with (
        serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.6)) as s0,
        serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.8)) as s1,
        serve(judge_config(JudgeReplies())) as judge,
    ):
        path = write_study(
            tmp_path / "r.toml", "r", {"m0": openai_spec(s0.base_url, "m0"), "m1": openai_spec(s1.base_url, "m1")},
            {"a": bench_a, "b": bench_b},
            judges={"eq": {"spec": openai_spec(judge.base_url, "judge"), "protocol": "equivalence",
                           "benchmarks": ["a"]}},
            boards=[{"benchmark": "a", "pairs": ["m0:m1"]}],
        )  # fmt: skip
        for executor, out in (("local", "local"), ("ray", "far")):
            args = ["study", str(path), "--out", str(tmp_path / out), "--no-reports", "--no-cache",
                    "--concurrency", "3"]  # fmt: skip
            study(args, executor, cluster)
    for key in ("m0--a", "m0--b", "m1--a", "m1--b"):
        local, far = tmp_path / "local" / "r" / "runs" / key, tmp_path / "far" / "r" / "runs" / key
        assert records(far) == records(local) and len(records(far)) in (16, 10)
        if key.endswith("--a"):
            judged = {
                folder: {
                    (x["id"], x["verdict"] and x["verdict"].get("equivalent"))
                    for x in map(
                        json.loads,
                        (folder / "judges" / "eq" / "judgements.jsonl").read_text().splitlines(),
                    )
                }
                for folder in (local, far)
            }
            assert judged[far] == judged[local] and judged[far]
    record = json.loads((tmp_path / "far" / "r" / "study.json").read_text())
    assert {r["state"] for r in [*record["runs"].values(), *record["judges"].values()]} == {"done"}
    assert (tmp_path / "far" / "r" / "boards" / "a.json").is_file()


def test_an_unreachable_ray_address_refuses_the_study(tmp_path: Path) -> None:
    path = write_study(
        tmp_path / "u.toml", "u", {"rand": "random"}, {"d": {"spec": "demo", "limit": 3}}
    )
    args = ["study", str(path), "--out", str(tmp_path / "studies"), "--executor", "ray",
            "--ray-address", f"127.0.0.1:{free_port()}"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "ray: cannot reach the cluster" in result.output
    assert not (tmp_path / "studies").exists()


def test_a_budget_stop_on_ray_keeps_the_answers_in_flight_and_resumes(
    tmp_path: Path, cluster: str
) -> None:
    """The driver sees the spend pass the budget in the lines a task appends; the task stops
    after its requests in flight and stores them (it is not killed with them), shows what it
    kept, leaves no stop file, and a rerun sends only the rest."""
    bench, _ = write_shared_bench(tmp_path / "a", 40, 4)
    long_answers = ServerConfig(reply=lambda request: "x" * 4000, latency=0.05)
    with serve(long_answers) as server:
        model = {"spec": openai_spec(server.base_url), "price": "input=10000,output=10000"}
        path = write_study(tmp_path / "n.toml", "n", {"long": model}, {"a": bench})
        args = ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports",
                "--no-cache", "--concurrency", "3", "--budget", "100"]  # fmt: skip
        done = study_process(args, cluster)
        assert done.returncode == 3, done.stderr
        assert (tmp_path / "studies" / "n" / "runs" / "long--a").exists(), done.stdout + done.stderr
        run = tmp_path / "studies" / "n" / "runs" / "long--a"
        kept = records(run)
        assert 0 < len(kept) < 40 and server.stats["requests"] == len(kept)
        assert "while long--a was answering; no new request was sent" in done.stderr
        kept_after = re.search(r"the (\d+) answers? that came in after it were kept", done.stderr)
        assert kept_after and int(kept_after[1]) <= 2  # concurrency 3: the others in flight
        assert f"stopped │ {len(kept)}/40 │" in " ".join(done.stdout.split())
        assert not (tmp_path / "studies" / "n" / STOP_FILE).exists()
        again = study_process([*args[:-1], "10000"], cluster)
        assert again.returncode == 0, again.stderr
        assert server.stats["requests"] == 40
    assert len(records(run)) == 40


def study_process(args: list[str], address: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **RAY_ENV, "COLUMNS": "200"}
    command = [sys.executable, "-m", "medlens", *args, "--executor", "ray",
               "--ray-address", address]  # fmt: skip
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
