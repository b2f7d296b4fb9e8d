"""Re-running a finished 5,000-item run: no model call, and how long it takes (target < 2 s).

Usage: .venv/bin/python bench/resume.py [--items 5000]
Prints the first (full) run's wall time, the rerun's wall time, and how many items the rerun sent
to the model (read from the progress line "resuming: N of N items already answered").
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from benchfiles import write_jsonl_benchmark


def timed_run(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "run", *args], capture_output=True, text=True
    )
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"medlens run failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    n = parser.parse_args().items
    with tempfile.TemporaryDirectory() as tmp:
        bench = write_jsonl_benchmark(Path(tmp) / "bench", n_items=n, n_images=50)
        args = ["--bench", f"jsonl:{bench}", "--model", "random", "--out", str(Path(tmp) / "runs")]
        first, _ = timed_run(args)
        again, log = timed_run(args)
        resumed = f"resuming: {n} of {n} items already answered" in log
        print(f"items                      {n}")
        print(f"first run (all items)      {first:6.2f} s")
        print(f"rerun of the finished run  {again:6.2f} s   (target < 2 s)")
        print(f"rerun skipped every item   {resumed}  (no model call)")
        print(f"ratio rerun / first run    {again / first:6.2f}")


if __name__ == "__main__":
    main()
