"""The `medlens` entry point leaves what is alive out of the interpreter's last collection
(issue 36: 0.15–0.2 s after a 26,000-item run), whether the command succeeds or is refused, and
its exit handlers and exit code stay as they were."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

AT_EXIT = (
    "import atexit, gc, sys\n"
    "atexit.register(lambda: print('frozen', gc.get_freeze_count(), file=sys.stderr))\n"
    "sys.argv = ['medlens', *sys.argv[1:]]\n"
    "from medlens.cli import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    ("args", "code"),
    [(["run", "--bench", "demo", "--model", "random", "--limit", "3"], 0),
     (["report", "no-such-run"], 2)],
)  # fmt: skip
def test_main_freezes_what_is_alive_before_the_exit_handlers(
    tmp_path: Path, args: list[str], code: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", AT_EXIT, *args, *(["--out", str(tmp_path)] if code == 0 else [])],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == code, done.stderr
    frozen = [line for line in done.stderr.splitlines() if line.startswith("frozen ")]
    assert frozen and int(frozen[-1].split()[1]) > 0
