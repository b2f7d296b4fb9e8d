"""A stand-in for ``vllm serve`` (tests set ``MEDLENS_VLLM_SERVE="python tests/vllm_standin.py"``).

It takes vLLM's command line (``MODEL_DIR --host H --port P --served-model-name NAME --seed S
…``; flags it does not know are ignored), serves the loopback OpenAI-compatible server of
``tests/loopback_server.py`` on that port with vLLM's ``/health``, ``/version`` and ``/v1/models``,
answering letters (gold from a ``[[key]]`` marker and ``STANDIN_GOLD``, a JSON file). Its
behaviour comes from the environment:

- ``STANDIN_HEALTHY_AFTER``: seconds before ``/health`` answers 200 (a model loading);
- ``STANDIN_NEVER_HEALTHY=1``: ``/health`` never answers 200;
- ``STANDIN_EXIT=N``: exit with code N at once (a server that crashes on start);
- ``STANDIN_HOLD=1``: chat answers wait forever (a run kept busy while a test interrupts it);
- ``STANDIN_PID_FILE``: write this process's pid there; ``STANDIN_ARGS_FILE``: its argv as JSON;
- ``STANDIN_ARRIVED_FILE``: created when the first chat request arrives.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from loopback_server import LoopbackServer, ServerConfig, gold_by_marker

LIFETIME_S = 600.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--served-model-name", default=None)
    args, _unknown = parser.parse_known_args()
    _write_env_file("STANDIN_PID_FILE", str(os.getpid()))
    _write_env_file("STANDIN_ARGS_FILE", json.dumps(sys.argv[1:]))
    if os.environ.get("STANDIN_EXIT"):
        print("stand-in: failing on start as asked", flush=True)
        sys.exit(int(os.environ["STANDIN_EXIT"]))
    healthy, arrived = threading.Event(), threading.Event()
    golds = (
        json.loads(Path(os.environ["STANDIN_GOLD"]).read_text())
        if os.environ.get("STANDIN_GOLD")
        else {}
    )
    config = ServerConfig(
        gold=gold_by_marker(golds), port=args.port, healthy=healthy, arrived=arrived,
        served_model=args.served_model_name or args.model, model_root=args.model,
        version="0.0.0+standin", lifetime=LIFETIME_S,
        hold=threading.Event() if os.environ.get("STANDIN_HOLD") else None,
    )  # fmt: skip
    server = LoopbackServer(config)
    server.start()
    print(f"stand-in serving {args.model} on port {server.port}", flush=True)
    if not os.environ.get("STANDIN_NEVER_HEALTHY"):
        time.sleep(float(os.environ.get("STANDIN_HEALTHY_AFTER") or 0))
        healthy.set()
    if os.environ.get("STANDIN_ARRIVED_FILE"):
        arrived.wait(LIFETIME_S)
        Path(os.environ["STANDIN_ARRIVED_FILE"]).write_text("arrived")
    time.sleep(LIFETIME_S)


def _write_env_file(variable: str, text: str) -> None:
    if os.environ.get(variable):
        Path(os.environ[variable]).write_text(text)


if __name__ == "__main__":
    main()
