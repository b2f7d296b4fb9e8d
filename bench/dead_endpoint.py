"""How soon `medlens run` stops against a dead endpoint (a closed loopback port).

Usage: .venv/bin/python bench/dead_endpoint.py [--items 26000] [--concurrency 1,8,32] [--repeat 3]

For each concurrency, runs `medlens run` on a jsonl benchmark of --items questions against
`openai:` at a port nobody listens on, with the default retry settings, and prints the wall time
of the whole command (process start, loading, the stop), its exit code and the time of a
`--dry-run` of the same benchmark (process start and loading alone) as the baseline: the
difference is what the dead endpoint cost. Minimum of --repeat rounds.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from benchfiles import write_jsonl_benchmark


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def timed(args: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "medlens", "run", *args], capture_output=True)
    return time.perf_counter() - started, proc.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=26000)
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bench = write_jsonl_benchmark(Path(tmp) / "bench", n_items=options.items, n_images=50)
        model = f"openai:m?base_url=http://127.0.0.1:{closed_port()}/v1"
        common = ["--bench", f"jsonl:{bench}", "--model", model, "--out", f"{tmp}/runs"]
        load = min(timed([*common, "--dry-run"])[0] for _ in range(options.repeat))
        print(f"{options.items} items; process start + loading (--dry-run): {load:.2f} s")
        for concurrency in (int(c) for c in options.concurrency.split(",")):
            rounds = [
                timed([*common, "--concurrency", str(concurrency)]) for _ in range(options.repeat)
            ]
            wall = min(seconds for seconds, _ in rounds)
            codes = sorted({code for _, code in rounds})
            print(
                f"concurrency {concurrency:>3}: stopped after {wall:.2f} s "
                f"({wall - load:.2f} s beyond loading), exit {codes}"
            )


if __name__ == "__main__":
    main()
