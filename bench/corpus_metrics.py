"""Benchmark: per-kind corpus metrics with 1,000-resample CIs, overall and per slice.

    .venv/bin/python bench/corpus_metrics.py [--items 26000] [--kind classify|open|detect|report]

Builds GMAI-sized runs in memory (4 axes with 18/18/38/4 values, 1–4 questions per image),
scores them, and times ``corpus_metrics.attach_corpus_metrics``: extraction and per-item
scoring are timed separately, since ``results.json`` is built from stored records.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.extract import extract
from medlens.scoring.corpus_metrics import attach_corpus_metrics
from medlens.scoring.item_scores import item_scores, score

AXES = {"task": 18, "department": 18, "modality": 38, "granularity": 4}
LABELS = ["normal", "benign", "malignant", "inflammatory", "other"]
WORDS = [
    "left",
    "right",
    "lower",
    "upper",
    "lobe",
    "liver",
    "kidney",
    "mass",
    "effusion",
    "free",
    "air",
    "nodule",
]


def make_item(kind: str, i: int, image: int, rng: np.random.Generator) -> tuple[Item, str]:
    meta = {axis: f"{axis}-{int(rng.integers(size))}" for axis, size in AXES.items()}
    meta["image_id"] = f"img{image}"
    if kind == "classify":
        gold = LABELS[int(rng.integers(len(LABELS)))]
        output = gold if rng.random() < 0.6 else LABELS[int(rng.integers(len(LABELS)))]
        meta["labels"] = "|".join(LABELS)
        return Item(str(i), "Which class?", kind, answer=gold, meta=meta), output
    if kind == "detect":
        x, y = rng.integers(0, 200, 2).tolist()
        shift = int(rng.integers(0, 30))
        output = f"[{x + shift}, {y}, {x + 50 + shift}, {y + 50}]"
        return Item(str(i), "Where?", kind, answer=((x, y, x + 50, y + 50),), meta=meta), output
    gold = " ".join(rng.choice(WORDS, size=int(rng.integers(1, 4) if kind == "open" else 12)))
    noise = " ".join(rng.choice(WORDS, size=int(rng.integers(0, 3))))
    output = f"The image shows {gold} {noise}." if rng.random() < 0.5 else gold
    return Item(str(i), "What is seen?", kind, answer=gold, meta=meta), output


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=26_000)
    parser.add_argument(
        "--kind", default="classify", choices=["classify", "open", "detect", "report"]
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    images = np.repeat(np.arange(args.items), rng.integers(1, 5, args.items))[: args.items]
    pairs = [make_item(args.kind, i, int(images[i]), rng) for i in range(args.items)]
    started = time.perf_counter()
    records: dict[str, Any] = {}
    for item, output in pairs:
        found = extract(item, output)
        records[item.id] = {
            "id": item.id, "output": output, "error": None, "extraction": found.to_json(),
            "score": score(item, found), "scores": item_scores(item, found),
        }  # fmt: skip
    scored = time.perf_counter() - started
    items = [item for item, _ in pairs]
    results: dict[str, Any] = {"by": {axis: {} for axis in AXES}}
    for axis in AXES:
        for item in items:
            results["by"][axis].setdefault(item.meta[axis], {})
    started = time.perf_counter()
    attach_corpus_metrics(results, items, records)
    elapsed = time.perf_counter() - started
    cells = sum(len(v) for v in results["by"].values())
    print(f"{args.items} {args.kind} items, {cells} slices + overall")
    print(f"extract + score:           {scored:7.2f} s")
    print(f"corpus metrics + CIs:      {elapsed:7.2f} s")
    for name, cell in results["metrics"][args.kind].items():
        lo, hi = cell["ci"]
        print(f"  {name:12} n={cell['n']} value={cell['value']:.4f} [{lo:.4f}, {hi:.4f}]")


if __name__ == "__main__":
    main()
