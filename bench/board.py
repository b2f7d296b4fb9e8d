"""Board benchmark: `medlens board` over many runs of a GMAI-sized benchmark, end to end.

Writes R run directories of N items each (GMAI-MMBench-like axes: 18 tasks × 18 departments ×
38 modalities × 4 granularities; records as `medlens run` writes them, fingerprints, usage and
the VLMEvalKit reading included, and the derived score file a finished run leaves beside them
unless ``--records-only``; skills spread so the board has ranks and ties), then times one
``python -m medlens board RUN... --by task,department,modality,granularity --json`` process
per size (imports, reading every records.jsonl, CIs, 1,000-resample rank intervals, all pairwise tests, per-axis tables; with ``--extras`` also 5 pairs and a metadata
file: pair tests, correlations, win shares) and reads its CPU time and peak RSS from the kernel
(``RUSAGE_CHILDREN`` of a wrapper process per size). Wall time on a shared machine follows the
load average, which is printed; CPU time does much less.

Target: 50 runs × 26,000 items in < 10 s and < 1 GB; time linear in runs × items: the printed
µs per run×item falls towards a constant as sizes grow, the rest being fixed costs (imports,
reading the items once).

    .venv/bin/python bench/board.py [--sizes 50x26000,50x13000,25x13000] [--per-image 3] [--extras]
                                    [--records-only]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

AXES = {"task": 18, "department": 18, "modality": 38, "granularity": 4}
PAIRS = 5


def write_items(path: Path, n_items: int, per_image: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = {}
    for axis, size in AXES.items():
        weights = rng.dirichlet(np.full(size, 0.8))
        values[axis] = rng.choice(size, n_items, p=weights)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n_items):
            meta = {axis: f"{axis}-{values[axis][i]}" for axis in AXES}
            meta["image_id"] = str(i // per_image)
            item = {"id": str(i), "question": f"Question {i} about the image?", "kind": "choice",
                    "options": {"A": "one", "B": "two", "C": "three", "D": "four"},
                    "answer": "ABCD"[i % 4], "context": None, "meta": meta,
                    "images": [{"source": "file", "name": f"{i}.png", "path": f"/x/{i}.png"}]}  # fmt: skip
            out.write(json.dumps(item) + "\n")


def outcomes(n_items: int, skill: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Which items a run answers right, and which it leaves unparsed."""
    rng = np.random.default_rng(seed)
    return rng.random(n_items) < skill, rng.random(n_items) < 0.05


def write_records(path: Path, n_items: int, skill: float, seed: int) -> None:
    right, unparsed = outcomes(n_items, skill, seed)
    lines = []
    for i in range(n_items):
        gold = "ABCD"[i % 4]
        answer = gold if right[i] and not unparsed[i] else "ABCD"[(i + 1) % 4]
        status = "unparsed" if unparsed[i] else "ok"
        score = 1.0 if right[i] and not unparsed[i] else 0.0
        fingerprint = hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()
        lines.append(
            f'{{"cached":false,"error":null,"extraction":{{"answer":"{answer}","method":"bare_letter",'
            f'"status":"{status}"}},"fingerprint":"{fingerprint}","id":"{i}","latency":0.8,'
            f'"output":"The answer is {answer}.","score":{score},"scores":{{}},'
            f'"usage":{{"completion_tokens":6,"prompt_tokens":412}},"vlmeval":{{"answer":"{answer}",'
            f'"method":"vlmeval:answer_is","score":{score},"status":"ok"}}}}\n'
        )
    path.write_text("".join(lines), encoding="utf-8")


def write_score_files(runs: list[Path], n_items: int) -> None:
    """The derived score file `medlens run` leaves beside results.json (the run's ``scores``
    artifact), built from the same outcomes as the records: the board reads these instead of
    records.jsonl."""
    from dataclasses import replace

    from medlens.analysis.artifacts import SCORES
    from medlens.analysis.score_table import score_table
    from medlens.runs.artifacts import Variant, basis_of
    from medlens.runs.view import RunView

    items = RunView(runs[0], run={"spec": {}}).items()
    base = score_table(items, {item.id: {} for item in items})
    served = {"served_model": {}, "system_fingerprint": {}}
    for r, run in enumerate(runs):
        right, unparsed = outcomes(n_items, skill=0.3 + 0.5 * r / max(len(runs), 1), seed=r)
        score = (right & ~unparsed).astype(float)
        status = np.where(unparsed, "unparsed", "ok").astype(object)
        table = replace(base, score=score, vlmeval=score.copy(), status=status)
        variant = Variant("medlens")
        path = SCORES.place(run, "medlens", variant)
        path.parent.mkdir(parents=True, exist_ok=True)
        stamp = basis_of(run, variant, inputs=SCORES.inputs).stamp()
        path.write_bytes(SCORES.encode((table, served), stamp))


def write_runs(
    root: Path, n_runs: int, n_items: int, per_image: int, derived: bool = True
) -> list[Path]:
    items = root / "items.jsonl"
    write_items(items, n_items, per_image, seed=0)
    bench = {"name": "gmai-like", "spec": "gmai:bench.tsv", "split": "val", "n_items": n_items,
             "has_answers": True, "content_hash": f"h{n_items}-{per_image}", "axes": list(AXES)}  # fmt: skip
    runs = []
    for r in range(n_runs):
        run = root / f"model_{r:02d}"
        run.mkdir()
        spec = {"benchmark": bench, "model": f"openai:model-{r}", "prompt": "vlmeval",
                "extract": "medlens", "probe": None, "seed": 0, "params": {}}  # fmt: skip
        (run / "run.json").write_text(json.dumps({"schema": 1, "spec": spec}))
        os.link(items, run / "items.jsonl")
        write_records(run / "records.jsonl", n_items, skill=0.3 + 0.5 * r / max(n_runs, 1), seed=r)
        runs.append(run)
    if derived:
        write_score_files(runs, n_items)
    meta = root / "models.csv"
    meta.write_text("run,params_b,medical\n" + "".join(
        f"model_{r:02d},{2 + 3 * r},{'yes' if r % 2 else 'no'}\n" for r in range(n_runs)
    ))  # fmt: skip
    return runs


MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
subprocess.run(sys.argv[1:], check=True)
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_mb": usage.ru_maxrss / 1024}))
"""
"""Runs the board in a child of a fresh process, so each size's peak RSS is its own."""


def time_board(
    root: Path, runs: list[Path], resamples: int, extras: bool
) -> tuple[dict[str, float], dict]:  # type: ignore[type-arg]
    """Wall and CPU seconds and peak RSS (MB) of one `medlens board` process, and its board."""
    command = [sys.executable, "-m", "medlens", "board", *map(str, runs), "--by", ",".join(AXES),
               "--resamples", str(resamples), "--json", "--output", str(root / "board.json")]  # fmt: skip
    if extras:
        pairs = ",".join(
            f"{runs[2 * k].name}:{runs[2 * k + 1].name}" for k in range(min(PAIRS, len(runs) // 2))
        )
        command += ["--pairs", pairs, "--meta", str(root / "models.csv")]
    measured = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True
    )
    figures = json.loads(measured.stdout.strip().splitlines()[-1])
    return figures, json.loads((root / "board.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x26000,50x13000,25x13000", help="RUNSxITEMS,…")
    parser.add_argument(
        "--per-image", type=int, default=3, help="questions per image (GMAI-like clusters)"
    )
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument(
        "--extras", action="store_true", help=f"also {PAIRS} --pairs and a --meta file (2 columns)"
    )
    parser.add_argument(
        "--records-only",
        action="store_true",
        help="no derived score files (runs made before medlens wrote them): records.jsonl is read",
    )
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"{args.per_image} question(s) per image, {args.resamples} resamples, axes "
          f"{', '.join(f'{a} ({n})' for a, n in AXES.items())}"
          + (f", {PAIRS} pairs, 2 meta columns" if args.extras else ""))  # fmt: skip
    for n_runs, n_items in sizes:
        with tempfile.TemporaryDirectory(prefix="medlens-board-bench-") as folder:
            root = Path(folder)
            runs = write_runs(root, n_runs, n_items, args.per_image, not args.records_only)
            figures, board = time_board(root, runs, args.resamples, args.extras)
        seconds, cpu, peak = figures["wall"], figures["cpu"], figures["rss_mb"]
        verdict = "meets" if seconds < 10 and peak < 1024 else "misses"
        rss = f"{peak:6.0f} MB"
        cells = n_runs * n_items
        print(f"{n_runs:3d} runs × {n_items:6,d} items = {cells:9,d}: {seconds:6.2f} s wall, "
              f"{cpu:6.2f} s CPU ({1e6 * cpu / cells:4.2f} µs per run×item), peak RSS {rss}  "
              f"[{verdict} < 10 s, < 1 GB]; tied groups {len(board['tied'])}, "
              f"rank CI of #1 {board['models'][0]['rank_ci']}")  # fmt: skip


if __name__ == "__main__":
    main()
