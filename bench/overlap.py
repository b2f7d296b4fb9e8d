"""Time `checks.overlap.nearest`: every perceptual hash of A against every one of B.

Run: ``PYTHONPATH=src python bench/overlap.py [--sizes 1000,5000,26000]``. Prints seconds per
size (random 64-bit hashes; the search does not depend on their values). Hashing the images
themselves (decode + pHash) is a separate cost, about that of `medlens check` decoding them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from medlens.checks.overlap import nearest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,5000,26000")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for size in (int(s) for s in args.sizes.split(",")):
        a = rng.integers(0, 2**63, size, dtype=np.uint64).tolist()
        b = rng.integers(0, 2**63, size, dtype=np.uint64).tolist()
        started = time.perf_counter()
        nearest(a, b)
        print(f"{size:,} × {size:,} hashes: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
