"""Run integrity through real `medlens` subprocesses: one writer per run, refused commands change
nothing, damaged lines are named, cache answers are counted, permanent errors stay put, a closed
stdout pipe ends quietly. Synchronised with events (the loopback server's `arrived`/`hold`), never
with sleeps."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from loopback_server import ServerConfig, gold_by_marker, serve

TIMEOUT = 180


def medlens(*args: str, cache: Path, **popen: Any) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEDLENS_CACHE": str(cache), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "medlens", *args],
        capture_output=True, text=True, timeout=TIMEOUT, env=env, **popen,
    )  # fmt: skip


def write_bench(
    folder: Path, n_items: int, broken_image: bool = False
) -> tuple[Path, dict[str, str]]:
    """A jsonl benchmark of text-only choice questions carrying `[[qN]]` markers for the server."""
    folder.mkdir(parents=True, exist_ok=True)
    golds: dict[str, str] = {}
    with (folder / "bench.jsonl").open("w") as handle:
        for index in range(n_items):
            key = f"q{index}"
            golds[key] = "ABCD"[index % 4]
            line: dict[str, Any] = {
                "id": key,
                "question": f"[[{key}]] Which finding is shown?",
                "kind": "choice",
                "options": {"A": "a", "B": "b", "C": "c", "D": "d"},
                "answer": golds[key],
                "meta": {"modality": "CT" if index % 2 else "MR"},
            }
            if broken_image and index == 0:
                (folder / "broken.png").write_bytes(b"this is not an image")
                line["images"] = ["broken.png"]
            handle.write(json.dumps(line) + "\n")
    return folder / "bench.jsonl", golds


def flat(text: str) -> str:
    """Text with line wrapping undone (rich wraps long lines at spaces)."""
    return " ".join(text.split())


def records_of(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def openai_spec(base_url: str) -> str:
    return f"openai:tiny?base_url={base_url}&max_retries=0&read_timeout=60"


def test_second_writer_is_refused_and_the_first_keeps_every_record(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 6)
    arrived, hold = threading.Event(), threading.Event()
    config = ServerConfig(gold=gold_by_marker(golds), arrived=arrived, hold=hold)
    env = {**os.environ, "MEDLENS_CACHE": str(tmp_path / "cache")}
    with serve(config) as server:
        args = ["run", "--bench", f"jsonl:{bench}", "--model", openai_spec(server.base_url),
                "--out", str(tmp_path / "runs"), "--name", "same", "--concurrency", "2"]  # fmt: skip
        first = subprocess.Popen(
            [sys.executable, "-m", "medlens", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        try:
            assert arrived.wait(TIMEOUT), "the first run never sent a request"
            second = medlens(*args, cache=tmp_path / "cache")
        finally:
            hold.set()  # let the first run finish, whatever happened to the second
        _out, err = first.communicate(timeout=TIMEOUT)
        requests = server.stats["requests"]
    assert second.returncode == 2, second.stderr
    message = second.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert f"is being written by PID {first.pid} on " in message and "medlens run" in message
    assert first.returncode == 0, err
    records = records_of(tmp_path / "runs" / "same")
    assert sorted(r["id"] for r in records) == sorted(golds)  # every item, each once
    assert all(r["error"] is None for r in records) and requests == 6
    assert (tmp_path / "runs" / "same" / ".lock").read_text() == ""  # released


def random_run_args(bench: Path, runs: Path) -> list[str]:
    """``medlens run`` of the random model on a jsonl benchmark, as the run ``runs/r``."""
    return ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(runs),
            "--name", "r"]  # fmt: skip


def test_a_refused_rerun_leaves_the_run_byte_identical(tmp_path: Path) -> None:
    bench, _ = write_bench(tmp_path / "bench", 8)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    base = random_run_args(bench, runs)
    assert medlens(*base, cache=cache).returncode == 0
    file = runs / "r" / "records.jsonl"
    lines = file.read_text().splitlines()
    errored = {"id": "q1", "error": {"type": "timeout", "message": "slow"}, "output": None}
    file.write_text("\n".join([*lines, json.dumps(errored), json.dumps(errored)]) + '\n{"id": "q2"')
    before = snapshot(runs)
    refused = medlens(*base, "--prompt", "vlmeval", cache=cache)
    assert refused.returncode == 2 and 'prompt: "medlens" → "vlmeval"' in refused.stderr
    assert snapshot(runs) == before


def test_a_damaged_middle_line_is_named_by_report_and_resume(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 6)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    base = random_run_args(bench, runs)
    assert medlens(*base, cache=cache).returncode == 0
    file = runs / "r" / "records.jsonl"
    lines = file.read_text().splitlines()
    lines[2] = lines[2][: len(lines[2]) // 2]  # a middle line cut short
    file.write_text("\n".join(lines) + "\n")
    before = snapshot(runs)
    report = medlens("report", str(runs / "r"), cache=cache)
    assert report.returncode == 0 and f"{file}, line 3: damaged" in flat(report.stdout)
    # A reader never modifies the run's own files; the derived ones it refreshes (issue 26).
    derived = {"r/results.json", "r/derived/scores.medlens.rules.arrow"}
    after = snapshot(runs)
    assert {k: v for k, v in after.items() if k not in derived} == {
        k: v for k, v in before.items() if k not in derived
    }
    assert "stale (records.jsonl changed" in report.stderr
    resumed = medlens(*base, cache=cache)
    assert resumed.returncode == 0 and f"{file}, line 3: damaged" in flat(resumed.stderr)
    assert "its item is run again" in resumed.stderr
    assert sorted(r["id"] for r in records_of(runs / "r")) == sorted(golds)


def test_answers_from_the_cache_are_counted_and_no_cache_asks_again(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 5)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    with serve(ServerConfig(gold=gold_by_marker(golds), system_fingerprint="fp_1")) as server:
        spec = openai_spec(server.base_url)
        common = ["--bench", f"jsonl:{bench}", "--model", spec, "--out", str(runs)]
        fresh = medlens("run", *common, "--name", "fresh", cache=cache)
    assert fresh.returncode == 0, fresh.stderr
    assert all(
        r["served_model"] == "tiny" and r["system_fingerprint"] == "fp_1"
        for r in records_of(runs / "fresh")
    )
    # the server is gone: a new run is answered from the cache alone, and says so
    cached = medlens("run", *common, "--name", "cached", cache=cache)
    assert cached.returncode == 0, cached.stderr
    assert "cache: 5 of 5 answers came from the response cache" in flat(cached.stdout)
    results = json.loads((runs / "cached" / "results.json").read_text())
    fresh_usage = json.loads((runs / "fresh" / "results.json").read_text())["usage"]
    assert results["health"]["cached_answers"] == 5
    assert (
        results["usage"]["tokens"] == {}
        and results["usage"]["cached_tokens"] == fresh_usage["tokens"]
    )
    markdown = medlens("report", str(runs / "cached"), "-f", "md", cache=cache)
    assert "cache: 5 of 5 answers came from the response cache" in flat(markdown.stdout)
    uncached = medlens("run", *common, "--name", "uncached", "--no-cache", cache=cache)
    # the server is gone: the dead-endpoint breaker stops the run in one line (exit 2)
    assert uncached.returncode == 2 and "cannot connect to" in uncached.stderr


def test_a_new_checkpoint_behind_the_same_name_is_reported(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 4)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    common = ["--out", str(runs), "--name", "r", "--no-cache"]
    with serve(ServerConfig(gold=gold_by_marker(golds), served_model="ckpt-1")) as old:
        spec = openai_spec(old.base_url)
        assert medlens("run", "--bench", f"jsonl:{bench}", "--model", spec, *common, "--limit", "2", cache=cache).returncode == 0  # fmt: skip
    with serve(ServerConfig(gold=gold_by_marker(golds), served_model="ckpt-2")) as new:
        # another port: base_url is transport, so this continues the same run
        spec = openai_spec(new.base_url)
        resumed = medlens("run", "--bench", f"jsonl:{bench}", "--model", spec, *common, cache=cache)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    assert "resuming: 2 of 4" in resumed.stderr
    assert (
        "server-reported model changed within this run: ckpt-1 (2 answers), ckpt-2 (2 answers)"
        in flat(resumed.stdout)
    )


def test_permanent_item_errors_are_kept_until_retry_errors(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 4, broken_image=True)
    runs, cache = tmp_path / "runs", tmp_path / "cache"
    with serve(ServerConfig(gold=gold_by_marker(golds))) as server:
        spec = openai_spec(server.base_url)  # a model that reads images (baselines do not)
        base = ["run", "--bench", f"jsonl:{bench}", "--model", spec, "--out", str(runs),
                "--name", "r", "--max-error-rate", "0.5"]  # fmt: skip
        first = medlens(*base, cache=cache)
        assert first.returncode == 0 and "errored: 1 (image 1)" in flat(first.stdout), first.stdout
        before = snapshot(runs / "r")
        again = medlens(*base, cache=cache)
        assert "resuming: 4 of 4" in again.stderr  # the image error is not retried
        assert (runs / "r" / "records.jsonl").read_bytes() == before["records.jsonl"]
        retried = medlens(*base, "--retry-errors", cache=cache)
        assert "resuming: 3 of 4" in retried.stderr
        assert server.stats["requests"] == 3  # the broken image never reached the server
    assert [r["error"]["type"] for r in records_of(runs / "r") if r["error"]] == ["image"]


def test_baselines_never_read_images(tmp_path: Path) -> None:
    """A broken image is no error for `first`: it does not look at pixels, so none is read."""
    bench, _ = write_bench(tmp_path / "bench", 4, broken_image=True)
    runs = tmp_path / "runs"
    proc = medlens("run", "--bench", f"jsonl:{bench}", "--model", "first", "--out", str(runs),
                   "--name", "r", cache=tmp_path / "cache")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert all(r["error"] is None for r in records_of(runs / "r"))


def test_a_closed_stdout_pipe_ends_quietly(tmp_path: Path) -> None:
    bench, _ = write_bench(tmp_path / "bench", 30)
    runs = tmp_path / "runs"
    env = {**os.environ, "MEDLENS_CACHE": str(tmp_path / "cache")}
    assert medlens("run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(runs),
                   "--name", "r", cache=tmp_path / "cache").returncode == 0  # fmt: skip
    reader = subprocess.Popen(
        [sys.executable, "-m", "medlens", "report", str(runs / "r")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # `| head` that has already gone
    err = reader.stderr.read().decode()
    assert reader.wait(timeout=TIMEOUT) == 0, err
    assert err == ""


def png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (1, 2, 3)).save(buffer, format="PNG")
    return buffer.getvalue()


@pytest.mark.parametrize("option", ["--help", "--version"])
def test_version_and_help(option: str, tmp_path: Path) -> None:
    proc = medlens(option, cache=tmp_path)
    assert proc.returncode == 0
    if option == "--version":
        from medlens import __version__

        assert proc.stdout == f"medlens {__version__}\n"


def test_a_killed_writers_lock_is_taken_over_with_a_note(tmp_path: Path) -> None:
    bench, golds = write_bench(tmp_path / "bench", 4)
    arrived, hold = threading.Event(), threading.Event()
    env = {**os.environ, "MEDLENS_CACHE": str(tmp_path / "cache")}
    with serve(ServerConfig(gold=gold_by_marker(golds), arrived=arrived, hold=hold)) as server:
        args = ["run", "--bench", f"jsonl:{bench}", "--model", openai_spec(server.base_url),
                "--out", str(tmp_path / "runs"), "--name", "r"]  # fmt: skip
        first = subprocess.Popen(
            [sys.executable, "-m", "medlens", *args],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        )  # fmt: skip
        try:
            assert arrived.wait(TIMEOUT), "the first run never sent a request"
            first.kill()  # SIGKILL: no cleanup, the lock file still names it
            first.wait(timeout=TIMEOUT)
        finally:
            hold.set()
        assert str(first.pid) in (tmp_path / "runs" / "r" / ".lock").read_text()
        second = medlens(*args, cache=tmp_path / "cache")
    assert second.returncode == 0, second.stderr
    assert f"taking over the lock left by PID {first.pid} on " in flat(second.stderr)
    assert sorted(r["id"] for r in records_of(tmp_path / "runs" / "r")) == sorted(golds)


def test_a_run_whose_reader_goes_away_still_exits_0(tmp_path: Path) -> None:
    """`medlens run … | head -3`: the records are complete and the exit code says so."""
    bench, _ = write_bench(tmp_path / "bench", 30)
    env = {**os.environ, "MEDLENS_CACHE": str(tmp_path / "cache")}
    writer = subprocess.Popen(
        [sys.executable, "-m", "medlens", "run", "--bench", f"jsonl:{bench}", "--model", "random",
         "--out", str(tmp_path / "runs"), "--name", "r"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    assert writer.stdout is not None
    writer.stdout.close()  # the reader is gone before the summary is printed
    assert writer.wait(timeout=TIMEOUT) == 0
    assert len(records_of(tmp_path / "runs" / "r")) == 30
