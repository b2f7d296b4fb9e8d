"""--executor ray on a local 2-CPU Ray cluster: same records as a local run, worker loss, resume."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from loopback_server import Faults, LoopbackServer, ServerConfig, gold_by_marker, serve

ray = pytest.importorskip("ray")

from cli_runs import evaluate, run_options  # noqa: E402
from medlens.core.items import Item  # noqa: E402
from medlens.core.specs import parse_spec  # noqa: E402
from medlens.execution.ray import (  # noqa: E402
    WORKER_NAME_PREFIX,
    RayExecutorError,
    connect,
    needs_gpu,
    placement,
    shard_items,
)
from medlens.models.openai import ServerRejectedError  # noqa: E402

KEY_VAR, KEY = "MEDLENS_RAY_TEST_KEY", "sk-ray-test-9876543210"


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    """One local 2-CPU cluster for the module; workers inherit the key variable set here."""
    os.environ[KEY_VAR] = KEY
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()
        os.environ.pop(KEY_VAR, None)


def write_benchmark(folder: Path, n_items: int) -> tuple[str, dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(3):
        buffer = io.BytesIO()
        Image.new("RGB", (16, 16), (index * 80, 40, 90)).save(buffer, format="PNG")
        (folder / f"{index}.png").write_bytes(buffer.getvalue())
    golds, lines = {}, []
    for index in range(n_items):
        key = f"q{index}"
        golds[key] = "ABCD"[(index * 5) % 4]
        lines.append(
            json.dumps(
                {
                    "id": key,
                    "question": f"[[{key}]] Which view?",
                    "kind": "choice",
                    "options": {"A": "axial", "B": "coronal", "C": "sagittal", "D": "oblique"},
                    "answer": golds[key],
                    "images": [f"{index % 3}.png"],
                    "meta": {"task": f"t{index % 4}", "modality": "CT"},
                }
            )
        )
    (folder / "bench.jsonl").write_text("\n".join(lines) + "\n")
    return f"jsonl:{folder / 'bench.jsonl'}", golds


def records(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Records by id without timings: latency, `retries` (which attempt meets a fault depends on
    the server's attempt counters), and `cached` (items a killed worker had answered before dying
    come from the response cache when its shard is re-run)."""
    out = {}
    for line in (run_dir / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        record.pop("latency")
        record.pop("cached")
        record.pop("retries", None)
        out[record["id"]] = record
    return out


def openai_spec(server: LoopbackServer) -> str:
    return (
        f"openai:tiny?base_url={server.base_url}&api_key_env={KEY_VAR}&read_timeout=0.5"
        "&max_retries=10&backoff=0.002&backoff_max=0.02"
    )


def use_cache(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """A fresh response cache, so neither run answers from the other's cache."""
    monkeypatch.setenv("MEDLENS_CACHE", str(folder))


@pytest.mark.parametrize("model", ["random", "prior", "first"])
def test_baseline_ray_run_equals_local_run(tmp_path: Path, model: str) -> None:
    bench, _ = write_benchmark(tmp_path / "bench", 60)
    out = tmp_path / "runs"
    local = evaluate(run_options(bench=bench, model=model, out=out, name="local", concurrency=4))
    far = evaluate(
        run_options(bench=bench, model=model, out=out, name="ray", concurrency=4, executor="ray")
    )
    assert far.ran == 60 and len(records(out / "ray")) == 60
    assert records(out / "ray") == records(out / "local")
    assert far.results["overall"]["score"] == local.results["overall"]["score"]


def test_openai_ray_run_equals_local_run_even_when_a_worker_dies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    bench, golds = write_benchmark(tmp_path / "bench", 200)
    out = tmp_path / "runs"
    faults = Faults(rate_limit=0.1, server_error=0.05)
    config = ServerConfig(gold=gold_by_marker(golds), accuracy=0.7, faults=faults, api_key=KEY)
    killed: list[str] = []

    def kill_one_worker(record: dict[str, Any]) -> None:
        if killed:
            return
        names = [
            a["name"]
            for a in ray.util.list_named_actors(all_namespaces=True)
            if a["name"].startswith(WORKER_NAME_PREFIX)
        ]
        if names:
            ray.kill(ray.get_actor(sorted(names)[0], namespace=None))
            killed.append(sorted(names)[0])

    with serve(config) as server:
        use_cache(monkeypatch, tmp_path / "cache-local")
        local = evaluate(
            run_options(
                bench=bench, model=openai_spec(server), out=out, name="local", concurrency=8
            )
        )
        use_cache(monkeypatch, tmp_path / "cache-ray")
        far = evaluate(
            run_options(
                bench=bench,
                model=openai_spec(server),
                out=out,
                name="ray",
                concurrency=8,
                executor="ray",
            ),
            on_progress=kill_one_worker,
        )
    assert killed, "no worker was killed"
    assert "is re-queued" in caplog.text, "the re-queue path was not exercised"
    ray_records, local_records = records(out / "ray"), records(out / "local")
    assert sorted(ray_records) == sorted(golds)  # every item once, the lost shard re-run
    assert ray_records == local_records
    assert far.results["overall"]["score"] == local.results["overall"]["score"]
    assert 0.6 < local.results["overall"]["score"] < 0.8
    for path in (*out.rglob("*"), *(tmp_path / "cache-ray").rglob("*")):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_resume_works_across_executors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bench, golds = write_benchmark(tmp_path / "bench", 90)
    out = tmp_path / "runs"
    with serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.6, api_key=KEY)) as server:
        spec = openai_spec(server)
        first = evaluate(run_options(bench=bench, model=spec, out=out, name="mixed", limit=30))
        use_cache(monkeypatch, tmp_path / "cache-2")
        second = evaluate(
            run_options(bench=bench, model=spec, out=out, name="mixed", executor="ray")
        )
        use_cache(monkeypatch, tmp_path / "cache-3")
        whole = evaluate(run_options(bench=bench, model=spec, out=out, name="whole"))
        third = evaluate(
            run_options(bench=bench, model=spec, out=out, name="mixed", executor="ray")
        )
    assert (first.ran, second.done_before, second.ran, third.ran) == (30, 30, 60, 0)
    assert records(out / "mixed") == records(out / "whole")
    assert second.results["overall"]["score"] == whole.results["overall"]["score"]


def test_a_server_that_rejects_the_key_stops_a_ray_run(tmp_path: Path) -> None:
    bench, _ = write_benchmark(tmp_path / "bench", 20)
    with (
        serve(ServerConfig(api_key="sk-something-else")) as server,
        pytest.raises(ServerRejectedError, match="rejected the API key") as caught,
    ):
        evaluate(
            run_options(
                bench=bench,
                model=openai_spec(server),
                out=tmp_path / "runs",
                name="r",
                executor="ray",
            )
        )
    assert KEY not in str(caught.value)


def test_a_worker_that_cannot_build_the_model_fails_with_its_reason(tmp_path: Path) -> None:
    import asyncio

    from medlens.core.errors import SpecError
    from medlens.execution.ray import run_ray
    from medlens.execution.requests import RunSettings

    todo = items(10)
    with pytest.raises(SpecError, match="hf: no model folder at"):
        spec = parse_spec(f"hf:{tmp_path / 'absent'}")
        asyncio.run(run_ray(todo, spec, RunSettings(), print, items=todo))


def test_cli_run_with_ray_executor(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medlens.cli import app

    bench, _ = write_benchmark(tmp_path / "bench", 24)
    args = [
        "run",
        "--bench",
        bench,
        "--model",
        "oracle",
        "--out",
        str(tmp_path / "runs"),
        "--name",
        "cli",
        "--executor",
        "ray",
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(records(tmp_path / "runs" / "cli")) == 24
    results = json.loads((tmp_path / "runs" / "cli" / "results.json").read_text())
    assert results["overall"]["score"] == 1.0


def items(n: int) -> list[Item]:
    return [Item(id=str(i), question="q", kind="open") for i in range(n)]


@pytest.mark.parametrize(
    ("n_items", "workers", "sizes"),
    [(10, 2, [8, 2]), (100, 2, [13] * 7 + [9]), (5000, 2, [256] * 19 + [136]), (1, 8, [1])],
)
def test_shards_are_contiguous_and_about_four_per_worker(
    n_items: int, workers: int, sizes: list[int]
) -> None:
    shards = shard_items(items(n_items), workers)
    assert [len(s) for s in shards] == sizes
    assert [it.id for shard in shards for it in shard] == [str(i) for i in range(n_items)]


@pytest.mark.parametrize(
    ("spec", "gpu"),
    [
        ("vllm:/m", True),
        ("hf:/m?device=cuda:1", True),
        ("hf:/m", False),
        ("openai:m", False),
        ("random", False),
    ],
)
def test_gpu_backends_get_a_gpu_per_worker(spec: str, gpu: bool) -> None:
    assert needs_gpu(parse_spec(spec)) is gpu


def test_placement_on_the_two_cpu_cluster() -> None:
    assert placement(parse_spec("random"), 100, None).workers == 2
    assert placement(parse_spec("random"), 1, None).workers == 1
    assert placement(parse_spec("openai:m"), 100, 1).workers == 1
    with pytest.raises(RayExecutorError, match="needs GPUs; the cluster has none"):
        placement(parse_spec("vllm:/models/x"), 100, None)


def test_cli_in_a_fresh_process_starts_and_stops_its_own_local_cluster(tmp_path: Path) -> None:
    import subprocess
    import sys

    bench, _ = write_benchmark(tmp_path / "bench", 16)
    env = {**os.environ, "MEDLENS_RAY_CPUS": "2", "MEDLENS_CACHE": str(tmp_path / "cache")}
    command = [
        sys.executable,
        "-m",
        "medlens",
        "run",
        "--bench",
        bench,
        "--model",
        "first",
        "--out",
        str(tmp_path / "runs"),
        "--name",
        "fresh",
        "--executor",
        "ray",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(records(tmp_path / "runs" / "fresh")) == 16


@pytest.mark.parametrize("address", ["127.0.0.1:1", "ray://127.0.0.1:1"])
def test_an_unreachable_address_fails_at_once(address: str) -> None:
    # Ray alone would retry for minutes behind a frozen progress bar.
    with pytest.raises(RayExecutorError, match="cannot reach the cluster at"):
        connect(address)


def test_a_stop_keeps_the_answers_ray_workers_had_in_flight_and_resumes(tmp_path: Path) -> None:
    """A caller's StopAfterInFlight (a study's budget) on a Ray run: no shard starts after it,
    the running workers stop after their requests in flight, and every answer the server gave
    is stored (none dropped with a killed worker); a rerun sends only the rest."""
    from medlens.core.errors import StopAfterInFlight

    bench, golds = write_benchmark(tmp_path / "bench", 64)
    config = ServerConfig(gold=gold_by_marker(golds), api_key=KEY, latency=0.02)

    def stop_at_once(record: dict[str, Any]) -> None:
        raise StopAfterInFlight("budget: stop")

    with serve(config) as server:
        options = dict(bench=bench, model=openai_spec(server), out=tmp_path / "runs", name="s",
                       concurrency=2, executor="ray", cache=False)  # fmt: skip
        with pytest.raises(StopAfterInFlight, match="budget: stop"):
            evaluate(run_options(**options), on_progress=stop_at_once)
        stored = records(tmp_path / "runs" / "s")
        assert 8 <= len(stored) < 64  # at least the first shard's records; not every item
        assert server.stats["requests"] == len(stored)  # every paid answer kept
        again = evaluate(run_options(**options))
        assert server.stats["requests"] == 64 and again.ran == 64 - len(stored)
    assert sorted(records(tmp_path / "runs" / "s")) == sorted(golds)
