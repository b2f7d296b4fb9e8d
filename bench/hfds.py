"""Loading PathVQA's 5,564-item aligned subset from parquet (``hfds:``) vs the native loader.

Builds, in a temp dir, a cloned-repo layout of the subset (``data/test-00000-of-00001.parquet``,
the ``datasets`` Image struct with each row's JPEG bytes, row groups of ``--row-group`` rows, as
``datasets`` writes image tables) from ../shared/realdata/pathvqa, then measures each case in a
fresh subprocess, ``--repeat`` interleaved rounds, medians:

- ``native``:  ``pathvqa:DIR`` — every item listed and fingerprinted (what ``run`` does first)
- ``hfds``:    ``hfds:REPO?preset=pathvqa`` — the same on the parquet file
- ``native+images`` / ``hfds+images``: the same, then every image's bytes read once in item
  order (what a run's requests do), to show memory stays bounded by a few row groups

Peak RSS is the child's ``VmHWM`` (Linux; ``ru_maxrss`` would carry over the parent's peak across exec), and its growth over the RSS after the imports. The content hashes of both loaders are printed (equal).

    .venv/bin/python bench/hfds.py [--repeat 5] [--row-group 100]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

CHILD = """
import json, sys, time
def hwm():  # peak resident set of this process image (ru_maxrss survives exec from a big parent)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
import pyarrow.parquet, PIL.Image, huggingface_hub  # both loaders' imports, before the baseline
from medlens.core.specs import parse_spec
from medlens.sources import load_benchmark
from medlens.core.fingerprint import describe

spec, images = sys.argv[1], sys.argv[2] == "1"
base = hwm()
start = time.perf_counter()
benchmark = load_benchmark(parse_spec(spec))
items = list(benchmark.items())
info = describe(benchmark, items)
load = time.perf_counter() - start
read = 0
if images:
    for item in items:
        for image in item.images:
            read += len(image.read_bytes())
total = time.perf_counter() - start
rss = hwm()
print(json.dumps({"n": info.n_items, "hash": info.content_hash, "load_s": load,
                  "total_s": total, "peak_mb": rss, "base_mb": base, "image_bytes": read}))
"""


def measure(spec: str, images: bool) -> dict[str, float]:
    env_path = str(ROOT / "src")
    out = subprocess.run(
        [sys.executable, "-c", CHILD, spec, "1" if images else "0"],
        check=True, capture_output=True, text=True, env={"PYTHONPATH": env_path, "PATH": "/usr/bin"},
    )  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--row-group", type=int, default=100)
    args = parser.parse_args()
    import hfds_fixtures as fx
    from data_paths import realdata_dir

    pathvqa = realdata_dir("pathvqa")
    with tempfile.TemporaryDirectory() as tmp:
        repo = fx.write_repo(Path(tmp) / "repo", {"test": fx.pathvqa_table(pathvqa)},
                             row_group_size=args.row_group)  # fmt: skip
        parquet = repo / "data" / "test-00000-of-00001.parquet"
        print(f"parquet: {parquet.stat().st_size / 1e6:.1f} MB, row groups of {args.row_group}")
        cases = {
            "native": (f"pathvqa:{pathvqa}", False),
            "hfds": (f"hfds:{repo}?preset=pathvqa", False),
            "native+images": (f"pathvqa:{pathvqa}", True),
            "hfds+images": (f"hfds:{repo}?preset=pathvqa", True),
        }
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, (spec, images) in cases.items():
                runs[name].append(measure(spec, images))
    for name, results in runs.items():
        key = "total_s" if name.endswith("images") else "load_s"
        seconds = statistics.median(r[key] for r in results)
        peak = statistics.median(r["peak_mb"] for r in results)
        grown = statistics.median(r["peak_mb"] - r["base_mb"] for r in results)
        print(f"{name:14s} n={int(results[0]['n'])}  {seconds:6.3f} s  peak RSS {peak:6.1f} MB"
              f" (+{grown:5.1f} MB over the imports)  hash {str(results[0]['hash'])[:12]}")  # fmt: skip
    for base in ("", "+images"):
        key = "total_s" if base else "load_s"
        native = statistics.median(r[key] for r in runs["native" + base])
        hub = statistics.median(r[key] for r in runs["hfds" + base])
        print(f"hfds / native{base}: {hub / native:.2f}x time")


if __name__ == "__main__":
    main()
