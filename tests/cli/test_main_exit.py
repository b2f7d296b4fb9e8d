"""The `medlens` entry point leaves nothing of a run alive for the interpreter's last collection
(issue 36 froze what was alive at exit instead; issue 44 item 7 took the freeze out): the
objects left at exit do not grow with the run's items, and exit handlers and codes are as
they were."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchfiles import write_jsonl_benchmark

AT_EXIT = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('alive', len(gc.get_objects()), file=sys.stderr))\n"
    "sys.argv = ['medlens', *sys.argv[1:]]\n"
    "from medlens.cli import main\n"
    "main()\n"
)


def alive_at_exit(args: list[str], cwd: Path, code: int = 0) -> int:
    """Objects the collector tracks when the exit handlers run, after `medlens ARGS`."""
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT, *args], capture_output=True, text=True, cwd=cwd,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    alive = [line for line in done.stderr.splitlines() if line.startswith("alive ")]
    assert alive, done.stderr  # the exit handlers ran
    return int(alive[-1].split()[1])


def test_nothing_of_a_run_is_left_for_the_last_collection(tmp_path: Path) -> None:
    counts = []
    for n in (1000, 3000):  # (the progress bar keeps its last 1,000 samples: both hold them)
        bench = write_jsonl_benchmark(tmp_path / f"b{n}", n)
        args = ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path)]
        counts.append(alive_at_exit([*args, "--name", f"r{n}"], tmp_path))
    assert counts[1] - counts[0] < 1000  # 2,000 more items would leave dozens of objects each


@pytest.mark.parametrize("args", [["report", "no-such-run"], ["run", "--bench", "nosuch:x"]])
def test_a_refused_command_runs_the_exit_handlers_and_exits_2(
    tmp_path: Path, args: list[str]
) -> None:
    alive_at_exit([*args, *(["--model", "random"] if args[0] == "run" else [])], tmp_path, 2)
