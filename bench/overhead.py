"""Benchmark: harness overhead of the openai: backend + local runner against an instant server.

    .venv/bin/python bench/overhead.py [--items 600] [--levels 1,8,32,128] [--rgb] [--distinct]

A loopback OpenAI-compatible server (tests/loopback_server.py) runs in a separate process and
answers instantly; every item carries a 512×512 PNG (scikit-image's ``camera``, greyscale, or
``astronaut`` with ``--rgb``; eight rotations/flips, or one image per item with ``--distinct``).
For each concurrency level the items go through medlens's real per-item path (read image, check
it, build the prompt, fingerprint, send, extract, score, serialise the record), and the bench
prints items/s and harness CPU seconds per item (CPU of this process only: the server's is not
counted). The same run times a sequential loop over the official ``openai`` SDK for comparison.
Targets on the 2-core dev machine: ≥ 150 items/s at concurrency 32, ≤ 5 ms harness CPU per item.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import io
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from medlens.api import load_model
from medlens.core.items import ImageRef, Item
from medlens.execution.execute import run_local
from medlens.execution.prompts import build_prompt
from medlens.execution.requests import RunSettings
from medlens.models.base import ModelContext

SERVER = Path(__file__).resolve().parents[1] / "tests" / "loopback_server.py"


@dataclass(frozen=True)
class Figure:
    label: str
    items: int
    seconds: float
    cpu_seconds: float

    def line(self) -> str:
        rate = self.items / self.seconds
        cpu_ms = 1000 * self.cpu_seconds / self.items
        return f"{self.label:<28} {self.items:>6} {rate:>10.1f} {cpu_ms:>14.2f}"


def write_images(folder: Path, rgb: bool, count: int) -> list[Path]:
    """`count` distinct 512×512 PNGs made from one scikit-image picture."""
    import skimage.data

    base = skimage.data.astronaut() if rgb else skimage.data.camera()
    paths = []
    for index in range(count):
        pixels = np.rot90(base, index % 4)
        pixels = pixels[:, ::-1] if (index // 4) % 2 else pixels
        if index >= 8:  # beyond the 8 rotations/flips: change a few pixels so bytes differ
            pixels = pixels.copy()
            pixels.flat[index % pixels.size] ^= 1 + index % 200
        path = folder / f"img{index}.png"
        Image.fromarray(np.ascontiguousarray(pixels)).save(path, format="PNG")
        paths.append(path)
    return paths


def make_items(images: list[Path], n: int) -> list[Item]:
    return [
        Item(
            id=str(i),
            question=f"Question {i}: which anatomical structure is highlighted?",
            kind="choice",
            options={"A": "liver", "B": "spleen", "C": "kidney", "D": "pancreas"},
            answer="ABCD"[i % 4],
            images=(ImageRef("file", path=str(images[i % len(images)]), name=f"img{i}"),),
            meta={"task": f"t{i % 5}"},
        )
        for i in range(n)
    ]


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "--lifetime", "900"], stdout=subprocess.PIPE, text=True
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def run_medlens(base_url: str, items: list[Item], concurrency: int) -> Figure:
    spec = f"openai:bench?base_url={base_url}&max_retries=0&read_timeout=60"
    model = load_model(spec, ModelContext(items=(), params={"concurrency": concurrency}))
    settings = RunSettings(concurrency=concurrency)
    sink = io.StringIO()

    def on_record(record: dict[str, object]) -> None:
        if record["error"] is not None:
            raise RuntimeError(f"item failed: {record['error']}")
        sink.write(json.dumps(record) + "\n")  # what the run store does per record

    async def go() -> None:
        try:
            await run_local(items, model, settings, on_record)
        finally:
            await model.aclose()

    cpu, wall = time.process_time(), time.perf_counter()
    asyncio.run(go())
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    return Figure(f"medlens c={concurrency}", len(items), seconds, cpu_seconds)


def run_openai_sdk(base_url: str, items: list[Item]) -> Figure:
    """The baseline a user would write: a sequential loop over the official SDK."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    cpu, wall = time.process_time(), time.perf_counter()
    for item in items:
        data = item.images[0].read_bytes()
        url = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
        content = [
            {"type": "image_url", "image_url": {"url": url}},
            {"type": "text", "text": build_prompt(item, "medlens")},
        ]
        reply = client.chat.completions.create(
            model="bench", messages=[{"role": "user", "content": content}], temperature=0
        )
        assert reply.choices[0].message.content
    seconds, cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    client.close()
    return Figure("openai SDK, sequential", len(items), seconds, cpu_seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=600)
    parser.add_argument("--levels", default="1,8,32,128")
    parser.add_argument("--rgb", action="store_true", help="RGB astronaut instead of camera")
    parser.add_argument("--distinct", action="store_true", help="one image file per item")
    args = parser.parse_args()
    process, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as folder:
            images = write_images(Path(folder), args.rgb, args.items if args.distinct else 8)
            items = make_items(images, args.items)
            size = images[0].stat().st_size
            print(
                f"{args.items} items, 512x512 {'RGB' if args.rgb else 'grey'} PNG "
                f"({size / 1024:.0f} KiB, {len(images)} distinct), server {base_url}"
            )
            print(f"{'run':<28} {'items':>6} {'items/s':>10} {'CPU ms/item':>14}")
            run_medlens(base_url, items[:50], 8)  # warm-up: imports, first connections
            for level in (int(x) for x in args.levels.split(",")):
                print(run_medlens(base_url, items, level).line(), flush=True)
            print(run_openai_sdk(base_url, items[: max(50, args.items // 3)]).line(), flush=True)
    finally:
        process.terminate()
        process.wait(timeout=10)


if __name__ == "__main__":
    main()
