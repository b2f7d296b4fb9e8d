"""Paper-table benchmark: `medlens board --layout medcmr` over many judged runs, end to end.

Writes R run directories of a Med-CMR-shaped benchmark of N items (N − N/6.5 five-option MCQ and
N/6.5 open items, i.e. 22,000 + 4,000 at N = 26,000, spread over the 7 capability dimensions;
records as `medlens run` writes them) and, in each run, a rubric judge stage
(``judges/rubric/judge.json`` + ``judgements.jsonl``) with a verdict on every open item — as
`medlens judge` writes them. Then times one process per size of

    python -m medlens board RUN... --layout medcmr --judge rubric --pairs (7 pairs) --meta FILE --json

(imports, reading every records.jsonl and every judge's verdicts twice — scores and rubric
dimensions —, the combined score matrix, ranks with 1,000-resample intervals, all pairwise
tests, the layout's cells with CIs, the rubric-dimension table, the MCQ and open pair tests,
the metadata correlations) and reads its wall time, CPU time and peak RSS from the kernel
(``RUSAGE_CHILDREN`` of a wrapper process per size; see bench/board.py).

Target: 50 runs × 26,000 items (4,000 judged each) in < 15 s and < 1.5 GB; time linear in
runs × items: the printed µs per run×item is about constant across sizes.

    .venv/bin/python bench/tables.py [--sizes 50x26000,25x13000]
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

from board import MEASURE  # bench/board.py: the wrapper that reads a child's rusage

DIMENSIONS = ("SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI")
OPEN_SHARE = 4000 / 26000
PAIRS = 7
RUBRIC = {"name": "rubric", "dimensions": ["consistency", "coherence", "visual_accuracy",
          "ground_truth_correctness"], "weights": {"consistency": 1.0, "coherence": 1.0,
          "visual_accuracy": 4.0, "ground_truth_correctness": 4.0}, "template_sha256": "bench"}  # fmt: skip


def write_items(path: Path, n_items: int) -> int:
    """The benchmark's items.jsonl; returns the number of open items."""
    n_open = round(n_items * OPEN_SHARE)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(n_items):
            is_open = i >= n_items - n_open
            meta = {"dimension": DIMENSIONS[i % 7], "answer_type": "open" if is_open else "closed",
                    "image_id": str(i // 2), "source": "medcmr", "split": "test"}  # fmt: skip
            item = {"id": str(i), "question": f"Question {i}?", "kind": "open" if is_open else "choice",
                    "options": {} if is_open else dict(zip("ABCDE", ("a", "b", "c", "d", "e"), strict=True)),
                    "answer": "pneumothorax" if is_open else "ABCDE"[i % 5], "context": None,
                    "meta": meta, "images": [{"source": "file", "name": f"{i}.png", "path": f"/x/{i}.png"}]}  # fmt: skip
            out.write(json.dumps(item) + "\n")
    return n_open


def write_records(path: Path, n_items: int, n_open: int, skill: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    right = rng.random(n_items) < skill
    lines = []
    for i in range(n_items):
        is_open = i >= n_items - n_open
        answer = (
            ("pneumothorax" if right[i] else "no finding")
            if is_open
            else ("ABCDE"[i % 5] if right[i] else "ABCDE"[(i + 1) % 5])
        )
        score = 1.0 if right[i] else 0.0
        fingerprint = hashlib.sha256(f"{seed}:{i}".encode()).hexdigest()
        lines.append(
            f'{{"cached":false,"error":null,"extraction":{{"answer":"{answer}","method":"bench",'
            f'"status":"ok"}},"fingerprint":"{fingerprint}","id":"{i}","latency":0.8,'
            f'"output":"{answer}","score":{score},"scores":{{}},'
            f'"usage":{{"completion_tokens":6,"prompt_tokens":412}}}}\n'
        )  # fmt: skip
    path.write_text("".join(lines), encoding="utf-8")


def write_judge(folder: Path, n_items: int, n_open: int, skill: float, seed: int) -> None:
    """A rubric stage with one verdict per open item, as `medlens judge` writes it."""
    folder.mkdir(parents=True)
    spec = {"schema": 1, "name": "rubric", "judge": "openai:judge-model", "protocol": RUBRIC,
            "scope": "all", "repeats": 1, "created": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (folder / "judge.json").write_text(json.dumps(spec, indent=2) + "\n")
    rng = np.random.default_rng(seed + 1000)
    lines = []
    for i in range(n_items - n_open, n_items):
        points = {"consistency": int(rng.integers(6, 11)), "coherence": int(rng.integers(4, 11)),
                  "visual_accuracy": int(rng.integers(0, 11) * skill + 3),
                  "ground_truth_correctness": int(rng.integers(0, 11) * skill + 2)}  # fmt: skip
        points = {k: min(10, v) for k, v in points.items()}
        score = (points["consistency"] + points["coherence"] + 4 * points["visual_accuracy"]
                 + 4 * points["ground_truth_correctness"]) / 100  # fmt: skip
        line = {"by": "judge", "cached": False, "error": None, "fingerprint": f"j{seed}-{i}", "id": str(i),
                "latency": 0.5, "output": "{...}", "repeat": 0, "score": score, "status": "ok",
                "usage": {"completion_tokens": 40, "prompt_tokens": 300},
                "verdict": {"rationale": "bench", "scores": points}}  # fmt: skip
        lines.append(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n")
    (folder / "judgements.jsonl").write_text("".join(lines), encoding="utf-8")


def write_runs(root: Path, n_runs: int, n_items: int) -> list[Path]:
    items = root / "items.jsonl"
    n_open = write_items(items, n_items)
    bench = {"name": "medcmr", "spec": "medcmr:bench.jsonl", "split": "test", "n_items": n_items,
             "has_answers": True, "content_hash": f"medcmr-{n_items}"}  # fmt: skip
    runs = []
    for r in range(n_runs):
        run = root / f"model_{r:02d}"
        run.mkdir()
        spec = {"benchmark": bench, "model": f"openai:model-{r}", "prompt": "medlens",
                "extract": "medlens", "probe": None, "seed": 0, "params": {}}  # fmt: skip
        (run / "run.json").write_text(json.dumps({"schema": 1, "spec": spec}))
        os.link(items, run / "items.jsonl")
        skill = 0.3 + 0.5 * r / max(n_runs, 1)
        write_records(run / "records.jsonl", n_items, n_open, skill, seed=r)
        write_judge(run / "judges" / "rubric", n_items, n_open, skill, seed=r)
        runs.append(run)
    (root / "models.csv").write_text("run,params_b,medical\n" + "".join(
        f"model_{r:02d},{2 + 3 * r},{'yes' if r % 2 else 'no'}\n" for r in range(n_runs)))  # fmt: skip
    return runs


def time_tables(root: Path, runs: list[Path]) -> tuple[dict[str, float], dict]:  # type: ignore[type-arg]
    pairs = ",".join(
        f"{runs[2 * k].name}:{runs[2 * k + 1].name}" for k in range(min(PAIRS, len(runs) // 2))
    )
    command = [sys.executable, "-m", "medlens", "board", *map(str, runs), "--layout", "medcmr",
               "--judge", "rubric", "--pairs", pairs, "--meta", str(root / "models.csv"),
               "--json", "--output", str(root / "board.json")]  # fmt: skip
    measured = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True,
                              capture_output=True, text=True)  # fmt: skip
    figures = json.loads(measured.stdout.strip().splitlines()[-1])
    return figures, json.loads((root / "board.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50x26000,25x13000", help="RUNSxITEMS,…")
    args = parser.parse_args()
    sizes = [tuple(int(v) for v in size.split("x")) for size in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; Med-CMR layout, "
          f"rubric judge on {OPEN_SHARE:.1%} of the items, {PAIRS} pairs, 2 meta columns")  # fmt: skip
    for n_runs, n_items in sizes:
        with tempfile.TemporaryDirectory(prefix="medlens-tables-bench-") as folder:
            root = Path(folder)
            runs = write_runs(root, n_runs, n_items)
            figures, board = time_tables(root, runs)
        seconds, cpu, peak = figures["wall"], figures["cpu"], figures["rss_mb"]
        verdict = "meets" if seconds < 15 and peak < 1536 else "misses"
        cells = n_runs * n_items
        layout = board["layout"]
        tests = layout["pairs"]["tests"]
        print(f"{n_runs:3d} runs × {n_items:6,d} items = {cells:9,d}: {seconds:6.2f} s wall, "
              f"{cpu:6.2f} s CPU ({1e6 * cpu / cells:4.2f} µs per run×item), peak RSS {peak:6.0f} MB "
              f"[{verdict} < 15 s, < 1.5 GB]; open_all of #1 "
              f"{100 * layout['rows'][0]['cells']['open_all']['value']:.1f}, "
              f"MCQ pair test p {tests['mcq']['sign_p']:.2g}, open p {tests['open']['sign_p']:.2g}")  # fmt: skip


if __name__ == "__main__":
    main()
