"""``core.forked``: a run's item fingerprint (while the model loads) and its extraction-
sensitivity re-reading (while results are built) computed in a forked child (issue 36). The
value is the same whether a child computed it, a child failed, or no child was forked; a child
is never left behind."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cli_runs import run_args
from data_paths import realdata_dir
from medlens.analysis.results import build_results
from medlens.core import forked
from medlens.core.fingerprint import describe
from medlens.core.forked import computed_aside, fork_is_safe
from medlens.runs.store import RunStore

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="medlens forks only on Linux")

VALUES = np.array([0.0, 1.0, np.nan, 0.5, 1.0, 0.0, np.nan])


def in_child_only(action: Callable[[], np.ndarray]) -> Callable[[], np.ndarray]:
    """`VALUES` here; `action` in a forked child (which this process never is)."""
    parent = os.getpid()
    return lambda: VALUES.copy() if os.getpid() == parent else action()


def same(first: np.ndarray, second: np.ndarray) -> bool:
    return bool(np.array_equal(first, second, equal_nan=True))


def test_a_forked_child_delivers_the_array_it_computed() -> None:
    child_only = in_child_only(lambda: VALUES[::-1].copy())  # tells who computed it
    with computed_aside(child_only, len(VALUES), fork=True) as aside:
        assert aside.pid is not None
        assert same(aside.result(), VALUES[::-1])


def failing_child(kind: str) -> Callable[[], np.ndarray]:
    def fail() -> np.ndarray:
        if kind == "raises":
            raise RuntimeError("a bug in the child")
        if kind == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if kind == "unpicklable":
            return lambda: None  # type: ignore[return-value]
        return VALUES[:3].copy()  # "short": fewer rows than asked for

    return in_child_only(fail)


def seven_rows(values: np.ndarray) -> bool:
    return isinstance(values, np.ndarray) and values.shape == (7,)


@pytest.mark.parametrize("kind", ["raises", "killed", "unpicklable", "short"])
def test_a_child_that_fails_leaves_the_value_to_this_process(kind: str) -> None:
    with computed_aside(failing_child(kind), len(VALUES), seven_rows, fork=True) as aside:
        assert aside.pid is not None
        assert same(aside.result(), VALUES)
    assert aside.pid is None


def test_a_child_not_waited_for_is_killed_and_reaped() -> None:
    blocked = threading.Event()  # never set: the child would wait forever

    def forever() -> np.ndarray:
        blocked.wait()
        return VALUES

    pid = 0
    with (
        pytest.raises(KeyboardInterrupt),
        computed_aside(in_child_only(forever), 7, fork=True) as a,
    ):
        pid = a.pid or 0
        assert pid > 0
        raise KeyboardInterrupt  # Ctrl-C while results are built
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left


def test_no_fork_while_another_thread_runs_or_for_few_rows() -> None:
    with computed_aside(lambda: VALUES.copy(), forked.MIN_FORK_ROWS - 1) as aside:
        assert aside.pid is None
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fork_is_safe()
        with computed_aside(lambda: VALUES.copy(), forked.MIN_FORK_ROWS) as aside:
            assert aside.pid is None
            assert same(aside.result(), VALUES)
    finally:
        stop.set()
        thread.join()


def pubmedqa_replay(tmp_path: Path) -> Path:
    """Answers that medlens and VLMEvalKit's rules read apart (the sensitivity is not zero)."""
    from medlens.api import load_benchmark

    items = list(load_benchmark(f"pubmedqa:{realdata_dir('pubmedqa')}").items())
    outputs = {"yes": ["**Yes**", "Yes."], "no": ["No.", "no-brainer: no"], "maybe": ["Maybe."]}
    replay = tmp_path / "predictions.csv"
    with replay.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        for i, item in enumerate(items):
            choices = outputs[str(item.answer)]
            writer.writerow([item.id, choices[i % len(choices)]])
    return replay


COUNTED_RUN = """
import os, sys
from medlens.core import forked
forked.MIN_FORK_ROWS = 1
fork, counts = os.fork, sys.argv[1]
def counted():
    pid = fork()
    if pid:
        with open(counts, "a") as out:
            out.write(f"{pid}\\n")
    return pid
os.fork = counted
sys.argv = ["medlens", *sys.argv[2:]]
from medlens.cli import main
main()
"""
"""`medlens run` in a process of its own (one thread, as a user's), its forks counted."""


def test_a_run_forks_twice_and_writes_what_one_process_computes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`medlens run` (progress bar and all) forks for the items' fingerprint and for the
    sensitivity; run.json's fingerprint and results.json equal those of one process."""
    bench = f"pubmedqa:{realdata_dir('pubmedqa')}"
    forks = tmp_path / "forks.txt"
    command = [*run_args(bench, f"replay:{pubmedqa_replay(tmp_path)}", tmp_path, "r"),
               "--prompt", "vlmeval", "--extract", "vlmeval"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", COUNTED_RUN, str(forks), *command], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert len(forks.read_text().split()) == 2
    from medlens.api import load_benchmark

    benchmark, run = load_benchmark(bench), tmp_path / "r"
    spec = json.loads((run / "run.json").read_text(encoding="utf-8"))["spec"]
    assert spec["benchmark"] == describe(benchmark, list(benchmark.items())).to_json()
    written = json.loads((run / "results.json").read_text(encoding="utf-8"))
    del written["derived_from"]  # what results.json was derived from, added when it is saved
    assert written["extraction_sensitivity"]["difference"] != 0
    monkeypatch.setattr(forked, "MIN_FORK_ROWS", 10**9)
    alone = build_results(RunStore.open(run))
    assert written == json.loads(json.dumps(alone, default=float))
