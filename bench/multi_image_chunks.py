"""Multi-image parquet reading: every image of every item, in item order, as requests read them.

Writes a MedFrameQA-shaped table (``image_1`` … ``image_5``, 2–5 frames a question, row groups of
100 rows as ``datasets`` writes image tables) with frames of ``--kib`` KiB each, then reads every
item's images through ``ImageRef.read_bytes`` (the request path) twice: with
``container_images.CHUNKS_KEPT`` at the old 2 and at the current value. Prints seconds and the
ratio (same machine, same run). With 2 chunks kept, each item's five columns evict each other,
so every item decodes its row group's column chunks again.

    .venv/bin/python bench/multi_image_chunks.py [--rows 600] [--kib 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))


def write_table(folder: Path, rows: int, kib: int) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    import multimodal_fixtures as fx

    rng = np.random.default_rng(0)
    frames = [2 + i % 4 for i in range(rows)]
    columns: dict[str, list[object]] = {
        c: [fx.medframe_record(i, n)[c] for i, n in enumerate(frames)] for c in fx.MEDFRAME_TEXT
    }
    for k in range(5):
        columns[f"image_{k + 1}"] = [
            {"bytes": rng.bytes(kib * 1024), "path": None} if k < n else None for n in frames
        ]
    arrays = {
        name: pa.array(v, type=fx.IMAGE_TYPE if name[6:].isdigit() else None)
        for name, v in columns.items()
    }
    path = folder / "data" / "test-00000-of-00001.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.table(arrays), path, row_group_size=100)
    return folder


def read_all(folder: Path, kept: int) -> float:
    import medlens.core.container_images as cache
    from medlens.api import load_benchmark

    cache.CHUNKS_KEPT = kept
    cache._chunks.clear()
    items = list(load_benchmark(f"medframeqa:{folder}").items())
    start = time.perf_counter()
    for item in items:
        for image in item.images:
            image.read_bytes()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=600)
    parser.add_argument("--kib", type=int, default=40)
    args = parser.parse_args()
    import medlens.core.container_images as cache

    current = cache.CHUNKS_KEPT
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_table(Path(tmp), args.rows, args.kib)
        old = read_all(folder, 2)
        new = read_all(folder, current)
    print(f"{args.rows} questions, frames of {args.kib} KiB, row groups of 100")
    print(
        f"CHUNKS_KEPT=2: {old:.2f} s   CHUNKS_KEPT={current}: {new:.2f} s   ratio {old / new:.1f}x"
    )


if __name__ == "__main__":
    main()
