"""Time from `vllm-serve:` starting its server to the server answering ``/health``, on the
stand-in (``tests/vllm_standin.py``, healthy as soon as it listens): medlens's own overhead of a
started server (process start, health polling, ``/version`` and ``/v1/models``), and the same
stand-in started by hand (``subprocess`` + the same polling) as the baseline, in the same run.

    .venv/bin/python bench/vllm_serve_startup.py [ROUNDS]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
STANDIN = ROOT / "tests" / "vllm_standin.py"


def by_hand(folder: Path) -> float:
    """The stand-in started with subprocess and polled every 10 ms: the floor."""
    from medlens.models.server_process import free_port

    port = free_port()
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, str(STANDIN), str(folder), "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        with httpx.Client() as client:
            while True:
                try:
                    if client.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        return time.monotonic() - started
                except httpx.HTTPError:
                    pass
                time.sleep(0.01)
    finally:
        process.terminate()
        process.wait()


def through_medlens(folder: Path) -> tuple[float, float]:
    """(recorded seconds to healthy, wall time of the whole start incl. /version, /v1/models)."""
    from medlens.core.specs import parse_spec
    from medlens.models.vllm_serve import parse_serve, start

    began = time.monotonic()
    process, record = start(parse_serve(parse_spec(f"vllm-serve:{folder}")))
    wall = time.monotonic() - began
    process.stop()
    return float(record["seconds_to_healthy"]), wall


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    os.environ["MEDLENS_VLLM_SERVE"] = f"{sys.executable} {STANDIN}"
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp) / "model"
        folder.mkdir()
        (folder / "config.json").write_text('{"model_type": "qwen2_5_vl"}')
        hand = [by_hand(folder) for _ in range(rounds)]
        medlens = [through_medlens(folder) for _ in range(rounds)]
    healthy = [h for h, _ in medlens]
    wall = [w for _, w in medlens]
    print(f"stand-in started by hand, healthy after: median {statistics.median(hand):.3f} s "
          f"(min {min(hand):.3f})")  # fmt: skip
    print(
        f"vllm-serve: recorded seconds_to_healthy median {statistics.median(healthy):.3f} s "
        f"(min {min(healthy):.3f}); whole start incl. /version and /v1/models "
        f"{statistics.median(wall):.3f} s; ratio to by hand "
        f"{statistics.median(healthy) / statistics.median(hand):.2f}x ({rounds} rounds)"
    )


if __name__ == "__main__":
    main()
