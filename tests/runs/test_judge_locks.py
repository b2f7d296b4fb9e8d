"""Judge stages of one run write side by side (each its own store), never while `run` writes the
run's records, and never two processes into one store (issue 49: a study with two judges on a
benchmark failed on its own run lock)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from medlens.runs.lock import (
    RunLockedError,
    hold_judge_lock,
    hold_run_lock,
    lock_holder,
    results_written,
)

HOLDER = """
import sys, time
from pathlib import Path
from medlens.runs.lock import hold_judge_lock, hold_run_lock
run, kind, name = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
lock = hold_run_lock(run, "medlens run") if kind == "run" else hold_judge_lock(run, name, "medlens judge")
with lock:
    print("held", flush=True)
    sys.stdin.readline()
"""


class Holder:
    """A lock held by another process (flock is per open file: a thread would share ours)."""

    def __init__(self, run: Path, kind: str, name: str = "") -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", HOLDER, str(run), kind, name],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert self.process.stdout is not None and self.process.stdout.readline() == "held\n"

    def release(self) -> None:
        self.process.communicate("\n", timeout=60)


def test_two_judge_stages_of_one_run_hold_their_locks_at_once(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    other = Holder(run, "judge", "eq")
    try:
        with hold_judge_lock(run, "rubric", "medlens judge"):  # another store: side by side
            holder = lock_holder(run) or ""
            assert "medlens judge eq" in holder and "medlens judge rubric" in holder
            with results_written(run):  # the stages take turns only to rewrite results.json
                pass
    finally:
        other.release()
    assert lock_holder(run) is None


def refused_while_held(run: Path, held: tuple[str, str], lock: Any, message: str) -> None:
    """`lock` is refused with `message` while another process holds `held` (kind, name)."""
    holder = Holder(run, *held)
    try:
        with pytest.raises(RunLockedError, match=message), lock:
            pass
    finally:
        holder.release()


def test_one_judge_store_has_one_writer(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    refused_while_held(run, ("judge", "eq"), hold_judge_lock(run, "eq", "medlens judge"),
                       r"judge stage 'eq' is being written by PID \d+")  # fmt: skip


def test_a_judge_waits_for_no_run_and_a_run_for_no_judge(tmp_path: Path) -> None:
    run = tmp_path / "r"
    refused_while_held(run, ("run", ""), hold_judge_lock(run, "eq", "medlens judge"),
                       r"being written by PID \d+ .*medlens run")  # fmt: skip
    refused_while_held(run, ("judge", "eq"), hold_run_lock(run, "medlens run"),
                       r"being written by PID \d+ .*medlens judge eq")  # fmt: skip
    with hold_run_lock(run, "medlens run"):
        pass


def test_lock_files_stay_out_of_the_judges_folder(tmp_path: Path) -> None:
    """Derived results are stamped with every file under judges/: a lock file there would make
    them stale whenever a stage ran."""
    run = tmp_path / "r"
    run.mkdir()
    with hold_judge_lock(run, "eq", "medlens judge"), results_written(run):
        pass
    assert not (run / "judges").exists()
    assert {p.name for p in run.iterdir()} == {".lock"}  # the stage's own lock file went with it
