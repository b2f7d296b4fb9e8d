"""Adaptive runs replayed on real runs (issue 43): the same table as ``bench/adaptive.py``, on the
full runs of one benchmark a user has.

    PYTHONPATH=src .venv/bin/python bench/adaptive_runs.py RUN [RUN ...] [--target 0.05]
        [--seeds 200] [--batch 8] [--pairs NEW:OLD ...]

Leave one out: for each run, the bank is fitted (``items fit``'s code) on the other runs (at
least 5) and the run's own recorded scores are replayed as the model's answers, `--seeds`
times with different draws (the design's only randomness: coverage here is exactly the
design-based coverage of the run's real full score). ``--pairs NEW:OLD`` (run folder names)
adds a cell where OLD's full run is NEW's baseline (with the bank fitted without NEW).
Columns as in ``bench/adaptive.py``; "oracle" is left out (no item's true probability is known).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))  # bench/adaptive.py: one stepping loop
from adaptive import simulate, wilson_calls
from medlens.items.adaptive import Predictor
from medlens.items.bank import fit_bank, read_bank
from medlens.items.baseline import read_baseline
from medlens.runs.view import RunView


def scores(run: Path, ids: list[str]) -> np.ndarray:
    found = read_baseline(run, "RUN").scores
    return np.array([found[i] for i in ids])


def bank_without(runs: list[Path], held: set[Path], folder: Path) -> Path:
    path = folder / f"bank-{len(list(folder.iterdir()))}.json"
    path.write_text(json.dumps(fit_bank([r for r in runs if r not in held])), encoding="utf-8")
    return path


def cell(name: str, predictor: Predictor, run: Path, args: argparse.Namespace) -> None:
    start = time.time()
    items = RunView(run).items()
    y = np.broadcast_to(scores(run, [item.id for item in items]), (args.seeds, len(items)))
    model = predictor.item_model(items)
    out = simulate(model, np.ascontiguousarray(y), args.target, args.batch,
                   np.random.default_rng(args.seed))  # fmt: skip
    truth = float(y[0].mean())
    covered = (out.low <= truth) & (truth <= out.high)
    c = covered.mean()
    need = float(wilson_calls(np.array([truth]), args.target, len(items))[0])
    print(f"{name:>28}: score {truth:.3f}, coverage {c:.3f} ± {math.sqrt(c * (1 - c) / len(covered)):.3f}, "
          f"calls {out.calls.mean():.0f} of {len(items)} vs Wilson {need:.0f}: "
          f"{out.calls.mean() / need:.3f}×, mean half-width {out.half.mean():.4f}, every item "
          f"asked {out.capped.mean():.2f}; {time.time() - start:.0f} s", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--target", type=float, default=0.05)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pairs", nargs="*", default=[], help="NEW:OLD run folder names")
    args = parser.parse_args()
    runs = [run.resolve() for run in args.runs]
    by_name = {run.name: run for run in runs}
    print(f"{len(runs)} runs, target half-width {args.target}, batches of {args.batch}, "
          f"{args.seeds} draws a cell")  # fmt: skip
    with tempfile.TemporaryDirectory() as folder:
        for run in runs:
            if len(runs) - 1 < 5:
                raise SystemExit("leave-one-out needs at least 6 runs (5 to fit each bank)")
            bank = read_bank(bank_without(runs, {run}, Path(folder)))
            cell(f"{run.name} (bank)", Predictor(bank, None, ()), run, args)
        for pair in args.pairs:
            new, old = (by_name[name] for name in pair.split(":"))
            bank = read_bank(bank_without(runs, {new}, Path(folder)))
            baseline = read_baseline(old)
            cell(f"{new.name} (bank + {old.name})", Predictor(bank, baseline, ()), new, args)
            cell(f"{new.name} ({old.name} only)", Predictor(None, baseline, ()), new, args)


if __name__ == "__main__":
    main()
