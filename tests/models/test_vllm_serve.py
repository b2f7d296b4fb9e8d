"""``vllm-serve:DIR``: medlens starts a server, waits until it is healthy, runs, and stops it —
also when it never becomes healthy, crashes on start, or the run is interrupted or killed. The
server is ``tests/vllm_standin.py`` (the loopback OpenAI-compatible server behind vLLM's command
line), named by ``$MEDLENS_VLLM_SERVE`` as a user names another vLLM install."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cli_runs import invoke_run
from medlens.core.errors import SpecError
from medlens.core.specs import parse_spec
from medlens.models.base import ModelContext
from medlens.models.vllm_serve import make_vllm_serve

STANDIN = Path(__file__).parent.parent / "vllm_standin.py"
N = 6
WAIT_S = 60.0
"""Bound of every wait for another process (generous: the machine may be loaded)."""


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-in as the vllm command; a model folder, a letter benchmark and its golds."""
    monkeypatch.setenv("MEDLENS_VLLM_SERVE", f"{sys.executable} {STANDIN}")
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("STANDIN_PID_FILE", str(tmp_path / "standin.pid"))
    monkeypatch.setenv("STANDIN_ARGS_FILE", str(tmp_path / "standin.args"))
    monkeypatch.setenv("STANDIN_HEALTHY_AFTER", "0.3")
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # the server's log goes here
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(N)}
    (tmp_path / "gold.json").write_text(json.dumps(golds))
    monkeypatch.setenv("STANDIN_GOLD", str(tmp_path / "gold.json"))
    with open(tmp_path / "bench.jsonl", "w") as handle:
        for key, gold in golds.items():
            item = {"id": key, "question": f"[[{key}]] Which finding?", "kind": "choice",
                    "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": gold}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    folder = tmp_path / "qwen2.5-vl-tiny"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


def bench(folder: Path) -> str:
    return f"jsonl:{folder.parent / 'bench.jsonl'}"


def standin_pid(tmp_path: Path) -> int:
    return int((tmp_path / "standin.pid").read_text())


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting for a reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"


def gone_within(pid: int, seconds: float = WAIT_S) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1, output
    return lines[0]


def test_a_started_server_answers_and_is_stopped(standin: Path, tmp_path: Path) -> None:
    model = f"vllm-serve:{standin}?max_tokens=8&tensor_parallel_size=1&batch_invariant=true"
    result = invoke_run(bench(standin), model, tmp_path / "runs", "served")
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "served"
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == N and all(r["error"] is None for r in records)
    assert json.loads((run / "results.json").read_text())["overall"]["score"] == 1.0
    recorded = json.loads((run / "run.json").read_text())
    server = recorded["server"]
    assert server["command"][:2] == [sys.executable, str(STANDIN)]
    assert server["command"][2] == str(standin)
    assert (
        "--served-model-name" in server["command"] and "--tensor-parallel-size" in server["command"]
    )
    assert server["version"] == "0.0.0+standin" and server["seconds_to_healthy"] > 0
    assert server["environment"] == {"VLLM_BATCH_INVARIANT": "1"}
    assert server["determinism"]["temperature"] == 0.0 and server["determinism"]["engine_seed"] == 0
    assert server["determinism"]["batch_invariant"] is True
    assert recorded["spec"]["model"] == f"vllm-serve:{standin}?max_tokens=8"  # not where it ran
    assert gone_within(standin_pid(tmp_path))
    assert not list((tmp_path / "tmp").glob("medlens-vllm-serve-*.log"))  # its log went too


def test_the_spec_names_the_model_not_where_it_runs(standin: Path) -> None:
    spec = parse_spec(
        f"vllm-serve:{standin}?max_tokens=8&port=9&tensor_parallel_size=2&args=--dtype%20half"
    )
    model = make_vllm_serve(spec, ModelContext(items=(), describe_only=True))
    assert model.spec == f"vllm-serve:{standin}?args=--dtype half&max_tokens=8"
    assert model.deterministic and not model.reports_served_model
    assert '"args": ["--dtype", "half"]' in model.cache_identity


def test_a_server_that_never_becomes_healthy_is_stopped(
    standin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_NEVER_HEALTHY", "1")
    result = invoke_run(
        bench(standin), f"vllm-serve:{standin}?startup_timeout=1", tmp_path / "runs", "r"
    )
    assert result.exit_code == 2
    line = one_line(result.output)
    assert "vllm-serve: the server did not become healthy within 1s; stopped it" in line
    assert "stand-in serving" in line  # the log's last line says what the server was doing
    assert len(list((tmp_path / "tmp").glob("medlens-vllm-serve-*.log"))) == 1  # kept, named
    assert not (tmp_path / "runs").exists()
    assert gone_within(standin_pid(tmp_path))


def test_a_server_that_crashes_on_start(
    standin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STANDIN_EXIT", "3")
    result = invoke_run(bench(standin), f"vllm-serve:{standin}", tmp_path / "runs", "r")
    assert result.exit_code == 2
    line = one_line(result.output)
    assert "exited with code 3 before it was healthy" in line and "failing on start" in line
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("temperature=hot", "vllm-serve: option temperature='hot' is not a number"),
        ("startup_timeout=0", "vllm-serve: option startup_timeout='0' is out of range"),
        ("colour=red", "vllm-serve: unknown option(s) colour"),
        ("args=--served-model-name%20other", "serves other, not"),
    ],
)
def test_bad_input_is_one_line_and_starts_nothing_that_stays(
    standin: Path, tmp_path: Path, option: str, said: str
) -> None:
    result = invoke_run(bench(standin), f"vllm-serve:{standin}?{option}", tmp_path / "runs", "r")
    assert result.exit_code == 2 and said in one_line(result.output)
    assert not (tmp_path / "runs").exists()
    pid_file = tmp_path / "standin.pid"
    if "other" in option:  # it was started (only the answer told): and stopped
        assert gone_within(int(pid_file.read_text()))
    else:  # refused before the (minutes-long) start
        assert not pid_file.exists()


def test_a_missing_command_or_folder(
    standin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SpecError, match="no model folder at"):
        make_vllm_serve(parse_spec(f"vllm-serve:{tmp_path / 'nowhere'}"), ModelContext(items=()))
    monkeypatch.setenv("MEDLENS_VLLM_SERVE", str(tmp_path / "no-such-vllm") + " serve")
    with pytest.raises(SpecError, match="vllm-serve: cannot start"):
        make_vllm_serve(parse_spec(f"vllm-serve:{standin}"), ModelContext(items=()))


def medlens_process(standin: Path, tmp_path: Path) -> subprocess.Popen[bytes]:
    """``medlens run`` in its own process against a stand-in whose answers never come."""
    env = {**os.environ, "STANDIN_HOLD": "1", "STANDIN_ARRIVED_FILE": str(tmp_path / "arrived")}
    argv = [sys.executable, "-m", "medlens", "run", "--bench", bench(standin), "--model",
            f"vllm-serve:{standin}", "--out", str(tmp_path / "runs"), "--name", "busy"]  # fmt: skip
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + WAIT_S
    while not (tmp_path / "arrived").exists():
        assert process.poll() is None, process.stdout.read() if process.stdout else ""
        assert time.monotonic() < deadline, "the run never asked the started server"
        time.sleep(0.05)
    return process


def test_ctrl_c_stops_the_server(standin: Path, tmp_path: Path) -> None:
    process = medlens_process(standin, tmp_path)
    process.send_signal(signal.SIGINT)
    assert process.wait(WAIT_S) == 130
    assert gone_within(standin_pid(tmp_path))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signal: Linux")
def test_a_killed_run_leaves_no_server(standin: Path, tmp_path: Path) -> None:
    process = medlens_process(standin, tmp_path)
    process.kill()  # SIGKILL: no handler of medlens runs; the kernel tells the server
    process.wait(WAIT_S)
    assert gone_within(standin_pid(tmp_path))
