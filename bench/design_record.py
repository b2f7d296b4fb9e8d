"""The size of a designed subset's record (issue 31): subset.json, and the run.json and
results.json of a run on the subset (they carry the design), at a GMAI-sized benchmark.

    .venv/bin/python bench/design_record.py [--items 26000] [--per-image 2] [--n 500] [--runs 5]
                                            [--unit item|image]

Writes a jsonl benchmark of `--items` four-option items (`--per-image` questions per image) and
`--runs` runs on it whose answers follow a 2PL, fits the bank (``items fit``), draws `--n` items
(``items sample --stratify modality --unit UNIT``), runs the ``random`` model on the subset (``medlens run``)
and prints each file's size, then checks that ``medlens estimate`` reads the run.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from medlens.cli import app
from medlens.core.fingerprint import describe
from medlens.core.specs import Spec
from medlens.runs.store import RunStore
from medlens.sources import load_benchmark

LETTERS = "ABCD"


def write_bench(path: Path, n: int, per_image: int) -> None:
    rows = []
    for i in range(n):
        meta = {"modality": ("CT", "MR", "US", "XR")[i % 4], "image_id": f"img{i // per_image}"}
        rows.append(json.dumps({"id": f"q{i}", "question": f"question {i}?", "kind": "choice",
                                "options": {k: f"option {k}{i}" for k in LETTERS},
                                "answer": LETTERS[i % 4], "meta": meta}))  # fmt: skip
    path.write_text("\n".join(rows) + "\n")


def write_runs(folder: Path, bench: Path, count: int) -> list[Path]:
    benchmark = load_benchmark(Spec("jsonl", str(bench)))
    items = list(benchmark.items())
    info = describe(benchmark, items)
    rng = np.random.default_rng(0)
    a, b = rng.lognormal(0.2, 0.3, len(items)), rng.normal(0.0, 1.2, len(items))
    paths = []
    for k, theta in enumerate(np.linspace(-1.0, 1.0, count)):
        right = rng.random(len(items)) < 0.25 + 0.75 / (1 + np.exp(-a * (theta - b)))
        spec = {"benchmark": info.to_json(), "model": f"model{k}", "prompt": "medlens",
                "extract": "medlens", "probe": None, "seed": 0, "params": {}}  # fmt: skip
        store = RunStore.open_or_create(folder / f"r{k}", spec, items)
        for item, ok in zip(items, right, strict=True):
            answer = str(item.answer) if ok else LETTERS[(LETTERS.index(str(item.answer)) + 1) % 4]
            store.append({"id": item.id, "output": answer, "error": None, "score": float(ok),
                          "extraction": {"answer": answer, "status": "ok", "method": "t"},
                          "scores": {}})  # fmt: skip
        store.close()
        paths.append(folder / f"r{k}")
    return paths


def invoke(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    if result.exit_code != 0:
        raise SystemExit(f"{args[:2]} failed: {result.output}")
    return result.output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=26000)
    parser.add_argument("--per-image", type=int, default=2)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--unit", choices=("item", "image"), default="item")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bench = root / "bench.jsonl"
        write_bench(bench, args.items, args.per_image)
        runs = write_runs(root / "runs", bench, args.runs)
        invoke("items", "fit", *runs, "--output", root / "bank.json")
        subset = root / "sub" / "subset.jsonl"
        invoke("items", "sample", f"jsonl:{bench}", "--bank", root / "bank.json", "--n", args.n,
               "--stratify", "modality", "--unit", args.unit, "--output", subset)  # fmt: skip
        invoke("run", "--bench", f"jsonl:{subset}", "--model", "random", "--out", root / "out",
               "--name", "new")  # fmt: skip
        estimate = json.loads(invoke("estimate", root / "out" / "new", "--bank", root / "bank.json",
                                     "--json"))  # fmt: skip
        run = root / "out" / "new"
        print(f"{args.items} items ({args.per_image} per image), n={args.n}, {args.unit} units:")
        for path in (subset.parent / "subset.json", run / "run.json", run / "results.json"):
            print(f"  {path.name}: {path.stat().st_size / 1e3:,.1f} kB")
        print(
            f"  estimate {estimate['estimate']:.4f} [{estimate['ci'][0]:.4f}, "
            f"{estimate['ci'][1]:.4f}] from n={estimate['n']} of {estimate['population_n']}"
        )


if __name__ == "__main__":
    main()
