"""Adaptive runs by simulation (issue 43): coverage, width and calls to stop, per cell.

    PYTHONPATH=src .venv/bin/python bench/adaptive.py [--quick] [--reps 1000] [--items 2000]
        [--calibration 15] [--target 0.03] [--batch 8] [--cells inside,stronger,...] [--seed 43]

A world: `--items` four-option items on images (1–4 questions an image, an image effect shared
by its questions: clustered items), three departments (each item loads on its department's
skill) and model families with different skill profiles (families 1–3 calibrate the bank;
family 4, another profile, is used only for models outside the calibration range). The bank is
fitted (``items.irt``, as ``items fit``) on `--calibration` models of families 1–3 with
strengths spread over [−1, 1]. Each repetition draws a new model, its answers to every item
(the realised full-benchmark score is the truth), and steps ``items.adaptive_design`` (the code
``run --adaptive`` runs, vectorised over the repetitions) in batches of `--batch` until the
95% half-width is at most `--target` (after 40 answers) or every item is asked. Cells:

- inside: a family 1–3 model of strength in [−0.8, 0.8] (inside the calibration range), bank;
- stronger / weaker: a family-4 model of strength +2.5 / −2.5, bank (outside every
  calibration run);
- checkpoint: a model inside the range and a previous checkpoint of it (strength shifted by
  U(−0.15, 0.1), skills by N(0, 0.05); 80% of its answers' random draws shared, so the two agree
  on about 92% of items) whose full run is the baseline, with the bank;
- checkpoint-only: the same with the baseline alone (no bank).

Per cell: coverage of the 95% interval at stopping (± Monte Carlo s.e.) and the share of misses
above the truth; mean calls to stop; the calls a simple random sample needs for the same
half-width with the Wilson interval medlens prints (continuity-corrected, at the true score; no
finite-population correction) and their ratio; "oracle": the calls the best design of this kind
would need if it knew every item's true probability (π ∝ √(p(1 − p)), with the
finite-population term), a floor no predictor reaches; the largest half-width at stopping (the
target, unless the cap was hit) and the share of runs that asked every item.
"""

from __future__ import annotations

import argparse
import math
import time
from dataclasses import dataclass

import numpy as np

from medlens.items import adaptive_design as ad
from medlens.items import irt
from medlens.stats.intervals import wilson

PROFILES = np.array([[1.0, 0.6, 0.4], [0.5, 1.0, 0.6], [0.6, 0.5, 1.0], [1.0, 1.0, 0.2]])
"""Skill profile per family (family 4 only for models outside the calibration range)."""
MIN_CALLS = 40
CELLS = ("inside", "stronger", "weaker", "checkpoint", "checkpoint-only")


@dataclass(frozen=True)
class World:
    department: np.ndarray
    image: np.ndarray
    a: np.ndarray
    b: np.ndarray
    image_effect: np.ndarray

    @property
    def n(self) -> int:
        return len(self.a)

    def skills(
        self, strength: np.ndarray, family: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:
        """(R, 3) department skills of R models."""
        profile = PROFILES[family] - PROFILES[family].mean(axis=1, keepdims=True)
        return strength[:, None] + 0.5 * profile + rng.normal(0, 0.15, (len(strength), 3))

    def p_right(self, skill: np.ndarray) -> np.ndarray:
        """(R, N) probabilities of a right answer."""
        z = self.a * (skill[:, self.department] - self.b + self.image_effect[self.image])
        return 0.25 + 0.75 / (1 + np.exp(-z))


def make_world(n: int, rng: np.random.Generator) -> World:
    sizes = rng.integers(1, 5, n)
    image = np.repeat(np.arange(n), sizes)[:n]
    return World(rng.integers(0, 3, n), image, rng.lognormal(0.2, 0.35, n), rng.normal(0, 1.3, n),
                 rng.normal(0, 0.6, n))  # fmt: skip


def fit_bank(world: World, models: int, rng: np.random.Generator) -> irt.ItemFit:
    skill = world.skills(np.linspace(-1.0, 1.0, models), np.arange(models) % 3, rng)
    y = (rng.random((models, world.n)) < world.p_right(skill)).astype(float)
    return irt.fit_items(y, np.ones_like(y, dtype=bool), np.full(world.n, 0.25))


def item_model(world: World, fit: irt.ItemFit | None, baseline: np.ndarray | None) -> ad.ItemModel:
    """As ``Predictor.item_model`` builds it: groups by department, check cells by department ×
    the bank's difficulty thirds."""
    group = world.department.astype(np.int64)
    if fit is None:
        return ad.ItemModel(None, None, None, group, 3, group * 3, 9, baseline)
    a, b, c = fit.discrimination, fit.difficulty, fit.guess
    start = float(np.median(fit.theta))
    middle = c + (1 - c) / (1 + np.exp(-a * (start - b)))
    third = np.searchsorted(np.quantile(middle, [1 / 3, 2 / 3]), middle)
    return ad.ItemModel(a, b, c, group, 3, group * 3 + third, 9, baseline, start)


@dataclass
class Outcome:
    calls: np.ndarray
    low: np.ndarray
    high: np.ndarray
    half: np.ndarray
    capped: np.ndarray


def simulate(model: ad.ItemModel, y: np.ndarray, target: float, batch: int,
             rng: np.random.Generator) -> Outcome:  # fmt: skip
    """Every repetition's run, stepped together; a repetition leaves the batch once it stops."""
    reps, n = y.shape
    out = Outcome(np.zeros(reps, int), np.zeros(reps), np.zeros(reps), np.zeros(reps),
                  np.zeros(reps, bool))  # fmt: skip
    active, state = np.arange(reps), ad.start_state(model, reps)
    while len(active):
        size = min(batch, n - state.calls)
        state = ad.choose(model, state, rng.random((len(active), size)))
        state = ad.absorb(
            model, state, np.take_along_axis(y[active], state.order[:, -size:], axis=1)
        )
        found = ad.interval(model, state)
        capped = state.calls >= n
        stop = ((found.half_width <= target) & (state.calls >= MIN_CALLS)) | capped
        rows = active[stop]
        out.calls[rows], out.capped[rows] = state.calls, capped
        out.low[rows], out.high[rows] = found.low[stop], found.high[stop]
        out.half[rows] = found.half_width[stop]
        active, state = active[~stop], ad.take(state, np.nonzero(~stop)[0])
        if model.baseline is not None and model.baseline.shape[0] > 1:
            model = ad.ItemModel(**{**model.__dict__, "baseline": model.baseline[~stop]})
    return out


def wilson_calls(truth: np.ndarray, target: float, n_items: int) -> np.ndarray:
    """Items a simple random sample needs for a Wilson half-width ≤ target at the true score."""
    n = np.arange(2, 20 * n_items)
    lo, hi = wilson(np.round(truth[:, None] * n[None]), np.broadcast_to(n, (len(truth), len(n))))
    return n[np.argmax((hi - lo) / 2 <= target, axis=1)]


def oracle_calls(p: np.ndarray, target: float) -> np.ndarray:
    """Calls of the ideal design knowing every item's probability (module docstring)."""
    v = p * (1 - p)
    return np.sqrt(v).mean(axis=1) ** 2 / ((target / 1.96) ** 2 + v.mean(axis=1) / p.shape[1])


def cell_answers(cell: str, world: World, reps: int, rng: np.random.Generator
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:  # fmt: skip
    """(probabilities, answers, the baseline's answers or None) of `reps` models of the cell."""
    n, baseline = world.n, None
    if cell == "inside":
        skill = world.skills(rng.uniform(-0.8, 0.8, reps), rng.integers(0, 3, reps), rng)
    elif cell in ("stronger", "weaker"):
        skill = world.skills(
            np.full(reps, 2.5 if cell == "stronger" else -2.5), np.full(reps, 3), rng
        )
    else:
        old = world.skills(rng.uniform(-0.8, 0.8, reps), rng.integers(0, 3, reps), rng)
        shared = rng.random((reps, n))
        baseline = (shared < world.p_right(old)).astype(float)
        skill = old + rng.uniform(-0.15, 0.1, (reps, 1)) + rng.normal(0, 0.05, (reps, 3))
    p = world.p_right(skill)
    u = rng.random((reps, n))
    if baseline is not None:
        u = np.where(rng.random((reps, n)) < 0.8, shared, u)
    return p, (u < p).astype(float), baseline


def report_cell(cell: str, out: Outcome, p: np.ndarray, y: np.ndarray, baseline: np.ndarray | None,
                target: float, seconds: float) -> None:  # fmt: skip
    truth = y.mean(axis=1)
    covered = (out.low <= truth) & (truth <= out.high)
    c, reps = covered.mean(), len(covered)
    need = wilson_calls(truth, target, y.shape[1])
    oracle = oracle_calls(p, target)
    stopped = ~out.capped
    widest = out.half[stopped].max() if stopped.any() else float("nan")
    agree = "" if baseline is None else f", agreement {np.mean(baseline == y):.3f}"
    print(f"{cell:>16}: coverage {c:.3f} ± {math.sqrt(c * (1 - c) / reps):.3f} "
          f"(misses above {np.mean(out.low > truth):.3f}), calls {out.calls.mean():.0f} vs "
          f"Wilson {need.mean():.0f}: {out.calls.mean() / need.mean():.3f}× (oracle "
          f"{oracle.mean() / need.mean():.3f}×), mean half-width {out.half.mean():.4f}, widest "
          f"at stop {widest:.4f}, every item asked {out.capped.mean():.3f}; score "
          f"{truth.mean():.3f}{agree}; {seconds:.0f} s", flush=True)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000, help="repetitions a cell")
    parser.add_argument("--quick", action="store_true", help="100 repetitions a cell")
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--calibration", type=int, default=15, help="models the bank is fitted on")
    parser.add_argument("--target", type=float, default=0.03, help="target half-width")
    parser.add_argument("--batch", type=int, default=8, help="batch size (run's --concurrency)")
    parser.add_argument("--cells", default=",".join(CELLS))
    parser.add_argument("--seed", type=int, default=43, help="the world and the repetitions")
    args = parser.parse_args()
    reps = 100 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    world = make_world(args.items, rng)
    fit = fit_bank(world, args.calibration, rng)
    print(f"{args.items} items, bank of {args.calibration} models, target half-width "
          f"{args.target}, batches of {args.batch}, {reps} repetitions a cell")  # fmt: skip
    for cell in args.cells.split(","):
        start = time.time()
        p, y, baseline = cell_answers(cell, world, reps, rng)
        model = item_model(world, None if cell == "checkpoint-only" else fit, baseline)
        out = simulate(model, y, args.target, args.batch, rng)
        report_cell(cell, out, p, y, baseline, args.target, time.time() - start)


if __name__ == "__main__":
    main()
