"""The benchmark content hash before and after it read image bytes (issue 49), on real sets.

    .venv/bin/python bench/content_hash.py [--rounds 5] [--sets vqa-rad,slake] [--tsv-mb 0]

Per set (VQA-RAD and SLAKE from ../shared/realdata, loaded as `medlens run` loads them):

- time of the name-only rule medlens used before (each image by its name and base64 length,
  replicated here as it was), the baseline, measured in the same process;
- time of today's rule with a cold digest cache (an empty ``$MEDLENS_CACHE``: every image read
  and hashed), warm from disk (a new process's view: the in-process memo dropped), and warm in
  process (a study describing one benchmark per model);
- the hash before and after one byte of one image is replaced (same size, later mtime) in a
  temporary copy of the set, under both rules: the old rule's hash does not move.

With ``--tsv-mb N``, the timings also for a GMAI-shaped TSV of N MB (base64 images drawn from
VQA-RAD, ``tests/gmai_fixture.py``), written to a temporary folder first.

Times are the minimum over ``--rounds`` (the shared VM's spread is wide); ratios are against the
baseline of the same round set.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from medlens.api import load_benchmark
from medlens.core import image_digests
from medlens.core.fingerprint import describe
from medlens.core.items import Benchmark, Item

REALDATA = Path(__file__).resolve().parents[2] / "shared" / "realdata"
SETS = {"vqa-rad": "vqa_rad", "slake": "slake"}


def name_only_hash(items: Iterable[Item]) -> str:
    """The content hash as medlens computed it before issue 49 (images by name and length)."""
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256()
    for item in items:
        data: dict[str, Any] = item.to_json(with_images=False)
        data["images"] = [
            [image.name or os.path.basename(image.path), image.length or len(image.data)]
            for image in item.images
        ]
        digest.update(encoder.encode(data).encode("utf-8") + b"\n")
    return digest.hexdigest()


def fastest(rounds: int, setup: Callable[[], None], work: Callable[[], object]) -> float:
    times = []
    for _ in range(rounds):
        setup()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def timings(spec: str, rounds: int) -> dict[str, float]:
    benchmark = load_benchmark(spec)
    items = list(benchmark.items())
    cache = Path(tempfile.mkdtemp(prefix="medlens-bench-digests-"))
    os.environ["MEDLENS_CACHE"] = str(cache)

    def cold() -> None:
        shutil.rmtree(cache, ignore_errors=True)
        image_digests.forget_process_digests()

    baseline = fastest(rounds, lambda: None, lambda: name_only_hash(items))
    out = {"items": len(items), "images": len({i.path for it in items for i in it.images}),
           "name_only": baseline,
           "cold": fastest(rounds, cold, lambda: describe(benchmark, items)),
           "warm_disk": fastest(rounds, image_digests.forget_process_digests,
                                lambda: describe(benchmark, items)),
           "warm_process": fastest(rounds, lambda: None, lambda: describe(benchmark, items))}  # fmt: skip
    shutil.rmtree(cache, ignore_errors=True)
    return out


def one_byte_replaced(loader: str, folder: Path) -> dict[str, str]:
    """Hashes of a copy of the set before and after one image byte changed (both rules)."""
    with tempfile.TemporaryDirectory(prefix="medlens-bench-copy-") as tmp:
        copy = Path(tmp) / folder.name
        shutil.copytree(folder, copy)
        for path in copy.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        spec = f"{loader}:{copy}"
        benchmark = load_benchmark(spec)
        items = list(benchmark.items())
        before = (describe(benchmark, items).content_hash, name_only_hash(items))
        image = Path(items[0].images[0].path)
        data = bytearray(image.read_bytes())
        data[len(data) // 2] ^= 0x01
        image.write_bytes(bytes(data))
        later = image.stat().st_mtime + 60
        os.utime(image, (later, later))
        again: Benchmark = load_benchmark(spec)
        items = list(again.items())
        after = (describe(again, items).content_hash, name_only_hash(items))
    return {"image": image.name, "bytes_before": before[0], "bytes_after": after[0],
            "names_before": before[1], "names_after": after[1]}  # fmt: skip


def print_timings(label: str, found: dict[str, float]) -> None:
    base = found["name_only"]
    print(f"{label}: {found['items']:.0f} items, {found['images']:.0f} image files")
    for key in ("name_only", "cold", "warm_disk", "warm_process"):
        print(f"  {key:13s} {1000 * found[key]:8.1f} ms  ({found[key] / base:5.1f}× name-only)")


def tsv_timings(megabytes: int, rounds: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from gmai_fixture import write_gmai_tsv

    with tempfile.TemporaryDirectory(prefix="medlens-bench-tsv-") as tmp:
        path = Path(tmp) / "GMAI-shaped.tsv"
        write_gmai_tsv(path, n_rows=1, min_bytes=megabytes * 1_000_000, max_side=0,
                       compress_level=1)  # fmt: skip
        past = time.time() - 3600  # not "racy": written an hour ago, as a downloaded file
        os.utime(path, (past, past))
        found = timings(f"gmai:{path}", rounds)
        print_timings(f"GMAI-shaped TSV, {path.stat().st_size / 1e6:.0f} MB", found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--tsv-mb", type=int, default=0)
    args = parser.parse_args()
    if args.tsv_mb:
        tsv_timings(args.tsv_mb, args.rounds)
    for loader in args.sets.split(","):
        folder = REALDATA / SETS[loader]
        if not folder.is_dir():
            sys.exit(f"{folder}: absent (the real data sets sit in ../shared/realdata)")
        print_timings(loader, timings(f"{loader}:{folder}", args.rounds))
        changed = one_byte_replaced(loader, folder)
        print(f"  one byte of {changed['image']} replaced (same size):")
        print(
            f"    bytes rule: {changed['bytes_before'][:16]} → {changed['bytes_after'][:16]} "
            f"({'changed' if changed['bytes_before'] != changed['bytes_after'] else 'SAME'})"
        )
        print(f"    name rule:  {changed['names_before'][:16]} → {changed['names_after'][:16]} "
              f"({'changed' if changed['names_before'] != changed['names_after'] else 'same'})")  # fmt: skip


if __name__ == "__main__":
    main()
