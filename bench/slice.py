"""Slice benchmark: the full cube over 4 axes of 26,000 items, every cell with a 95% CI.

GMAI-MMBench-like axes: 18 tasks × 18 departments × 38 modalities × 4 granularities, binary
scores (about a tenth unparsed). Measures ``medlens.analysis.slices.cube`` (DuckDB CUBE group-by + per-cell
bootstrap CIs) and the worst-cell ranking:

- ``imports``: pyarrow, duckdb and scipy.special (paid once per process)
- ``first``: the first call after those imports
- ``warm``: later calls (median)
- ``clustered``: questions share images (2–4 per image), so CIs resample whole images (median)

Target: the full cube with CIs in < 2 s.

    .venv/bin/python bench/slice.py [--items 26000] [--resamples 1000]
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time

import numpy as np

from medlens.analysis.score_table import ScoreTable
from medlens.analysis.slices import cube, slice_table, worst_cells

AXES = {"task": 18, "department": 18, "modality": 38, "granularity": 4}


def synthetic_scores(n_items: int, seed: int, share_images: bool) -> ScoreTable:
    """Items with skewed axis values and per-task accuracy, as results.score_table builds them."""
    rng = np.random.default_rng(seed)
    meta = {}
    for axis, size in AXES.items():
        weights = rng.dirichlet(np.full(size, 0.8))
        meta[axis] = np.array(
            [f"{axis}-{v}" for v in rng.choice(size, n_items, p=weights)], dtype=object
        )
    task_skill = rng.uniform(0.2, 0.8, AXES["task"])
    task_index = np.array([int(t.rsplit("-", 1)[1]) for t in meta["task"]])
    status = np.where(rng.random(n_items) < 0.1, "unparsed", "ok").astype(object)
    score = ((rng.random(n_items) < task_skill[task_index]) & (status == "ok")).astype(float)
    if share_images:
        cluster = np.repeat(np.arange(n_items), rng.integers(2, 5, n_items))[:n_items].astype(str)
    else:
        cluster = np.arange(n_items).astype(str)
    return ScoreTable(
        ids=[str(i) for i in range(n_items)],
        score=score,
        vlmeval=score.copy(),
        random=np.full(n_items, 0.25),
        status=status,
        cluster=cluster.astype(object),
        meta=meta,
    )


def timed_cube(scores: ScoreTable, resamples: int) -> tuple[float, int, int]:
    start = time.perf_counter()
    cells = cube(slice_table(scores), list(AXES), n_resamples=resamples)
    worst = worst_cells(cells, 10)
    return time.perf_counter() - start, len(cells), len(worst)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=26_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="warm runs; the median is shown")
    args = parser.parse_args()
    plain = synthetic_scores(args.items, seed=0, share_images=False)
    clustered = synthetic_scores(args.items, seed=0, share_images=True)
    print(f"{args.items:,} items, axes {', '.join(f'{a} ({n})' for a, n in AXES.items())}, "
          f"{args.resamples} resamples")  # fmt: skip
    start = time.perf_counter()
    for module in ("pyarrow", "pyarrow.compute", "duckdb", "scipy.special"):
        importlib.import_module(module)
    print(f"{'imports':10s} {time.perf_counter() - start:6.2f} s  pyarrow, duckdb, scipy.special")
    runs = [
        ("first", plain, 1),
        ("warm", plain, args.repeat),
        ("clustered", clustered, args.repeat),
    ]
    for label, scores, repeat in runs:
        timings = [timed_cube(scores, args.resamples) for _ in range(repeat)]
        seconds = statistics.median(t[0] for t in timings)
        _, n_cells, n_worst = timings[0]
        verdict = "meets" if seconds < 2.0 else "misses"
        print(f"{label:10s} {seconds:6.2f} s  {n_cells:,} cells (16 groupings), "
              f"{n_worst} worst listed  [{verdict} < 2 s]")  # fmt: skip


if __name__ == "__main__":
    main()
