"""Item science by simulation with a known truth (issue 31): estimate coverage, error and width,
audit precision and recall, and the item model's fit time and memory.

    .venv/bin/python bench/items.py [--worlds 10] [--reps 100] [--items 2000] [--n 300]
                                    [--units item,image]
                                    [--audit-reps 10] [--fit-items 26000] [--fit-runs 50]

A world: a benchmark of `--items` four-option items on images (1–4 questions each, an image
effect shared by its questions), three skills (each item loads mostly on its department's skill)
and model *families* with different skill profiles. The bank is fitted on 20 calibration models
of families 1–3 (abilities in [−1, 1]). Per repetition a new model answers every item (its
realised full-benchmark score is the truth), `items sample` draws `--n` items (stratified by
department and predicted difficulty; `--units`: single items, the default design, and whole images,
on the same answers) and `estimate` runs on them:

- interpolating: a family 1–3 model inside the calibration range;
- extrapolating: a family-4 model (another skill profile) stronger than every calibration model.

Coverage of the 95% interval (± Monte Carlo standard error), mean absolute error, and mean
half-width against the Wilson interval on the same n are printed per cell. The audit flips 2% of
keys to another letter in a world answered by 30 models and reports precision among the items
flagged ``key``, recall within the top 2 × (number flipped) by suspicion, and the share of
flipped items whose ``suggested_answer`` is the true key. The fit figure runs in a child
process (its peak resident memory is the fit's).
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from medlens.core.items import Item
from medlens.items import irt
from medlens.items.audit import audit_responses, fitted_model
from medlens.items.bank import Bank, bank_content
from medlens.items.estimate import RunDesign, _estimate
from medlens.items.responses import Responses
from medlens.items.sample import _design

LETTERS = "ABCD"
DEPARTMENTS = ("radiology", "pathology", "dermatology")
PROFILES = np.array([[1.0, 0.6, 0.4], [0.5, 1.0, 0.6], [0.6, 0.5, 1.0], [1.0, 1.0, 0.2]])
"""Skill profile per family (family 4: a different mix, used only for the new strong model)."""


@dataclass(frozen=True)
class World:
    items: list[Item]
    department: np.ndarray
    image: np.ndarray
    a: np.ndarray
    b: np.ndarray
    image_effect: np.ndarray

    def p_correct(self, strength: float, family: int, rng: np.random.Generator) -> np.ndarray:
        """A model's probability of being right on every item (its skills per department)."""
        skills = (
            strength + 0.5 * (PROFILES[family] - PROFILES[family].mean()) + rng.normal(0, 0.15, 3)
        )
        theta = skills[self.department]
        return 0.25 + 0.75 / (
            1 + np.exp(-self.a * (theta - self.b + self.image_effect[self.image]))
        )


def make_world(n_items: int, rng: np.random.Generator) -> World:
    sizes = rng.integers(1, 5, n_items)
    image = np.repeat(np.arange(n_items), sizes)[:n_items]
    department = rng.integers(0, 3, n_items)
    items = [
        Item(id=f"q{j}", question="q", kind="choice", options={k: k for k in LETTERS},
             answer=LETTERS[j % 4], meta={"department": DEPARTMENTS[department[j]], "image_id": f"i{image[j]}"})
        for j in range(n_items)
    ]  # fmt: skip
    return World(items, department, image, rng.lognormal(0.2, 0.35, n_items), rng.normal(0, 1.3, n_items),
                 rng.normal(0, 0.6, n_items))  # fmt: skip


def calibrate(world: World, rng: np.random.Generator, n_models: int = 20) -> Bank:
    strengths = np.linspace(-1.0, 1.0, n_models)
    y = np.array(
        [
            rng.random(len(world.items)) < world.p_correct(s, k % 3, rng)
            for k, s in enumerate(strengths)
        ],
        float,
    )
    fit = irt.fit_items(y, np.ones_like(y, bool), np.full(len(world.items), 0.25))
    return Bank(
        path=Path("bank.json"), benchmark={"content_hash": "sim"}, ids=[i.id for i in world.items],
        difficulty=fit.difficulty, discrimination=fit.discrimination, guess=fit.guess,
        p_correct=y.mean(axis=0), abilities={f"m{k}": (float(t), 0.1) for k, t in enumerate(fit.theta)}, sha256="",
    )  # fmt: skip


def one_estimate(
    world: World, bank: Bank, y: np.ndarray, n: int, seed: int, unit: str
) -> tuple[float, float, float, float, bool]:
    """(estimate − truth, covered, half-width, Wilson half-width, extrapolating)."""
    layout = _design(bank, world.items, n, seed, ("department",), unit)
    scores = {item.id: float(v) for item, v in zip(world.items, y, strict=True)}
    found = _estimate(bank, RunDesign(Path("run"), layout, scores), None)
    truth = float(y.mean())
    lo, hi = found.ci
    return (
        found.estimate - truth,
        float(lo <= truth <= hi),
        (hi - lo) / 2,
        (found.wilson_ci[1] - found.wilson_ci[0]) / 2,
        found.extrapolating,
    )


def coverage(args: argparse.Namespace) -> None:
    units = args.units.split(",")
    cells: dict[str, list[tuple[float, float, float, float, bool]]] = {
        f"{unit} {cell}": [] for unit in units for cell in ("interpolating", "extrapolating")
    }
    for w in range(args.worlds):
        rng = np.random.default_rng(1000 + w)
        world = make_world(args.items, rng)
        bank = calibrate(world, rng)
        for rep in range(args.reps):
            inside = world.p_correct(float(rng.uniform(-0.8, 0.8)), int(rng.integers(0, 3)), rng)
            outside = world.p_correct(2.5, 3, rng)
            for cell, p in (("interpolating", inside), ("extrapolating", outside)):
                y = (rng.random(len(p)) < p).astype(float)
                for unit in units:  # the same answers under each design
                    cells[f"{unit} {cell}"].append(one_estimate(world, bank, y, args.n, rep, unit))
    reps = args.worlds * args.reps
    print(
        f"estimate: {args.worlds} worlds × {args.reps} reps = {reps} per cell; {args.items} items, n ≈ {args.n}"
    )
    for cell, rows in cells.items():
        err, hit, half, wil, extra = (np.array(col) for col in zip(*rows, strict=True))
        c = hit.mean()
        print(f"  {cell:>19}: coverage {c:.1%} ± {math.sqrt(c * (1 - c) / len(hit)):.1%} (MC s.e.), "
              f"MAE {np.abs(err).mean():.4f}, mean half-width {half.mean():.4f} vs Wilson "
              f"{wil.mean():.4f} (ratio {half.mean() / wil.mean():.3f}{_ratio_se(half, wil, args.worlds)}), "
              f"flagged extrapolating {extra.mean():.0%}")  # fmt: skip


def _ratio_se(half: np.ndarray, wilson: np.ndarray, worlds: int) -> str:
    """The ratio's Monte Carlo error: the s.e. of the per-world ratios (worlds differ more than
    repetitions within one), as text."""
    if worlds < 2:
        return ""
    ratios = [h.mean() / w.mean() for h, w in zip(np.array_split(half, worlds),
                                                  np.array_split(wilson, worlds), strict=True)]  # fmt: skip
    return f" ± {np.std(ratios, ddof=1) / math.sqrt(worlds):.3f} over worlds"


def round4_estimate(
    world: World, bank: Bank, y: np.ndarray, n: int, seed: int, by: bool
) -> list[tuple[str, float, float, float, bool]]:
    """(cell suffix, truth, lo, hi, extrapolating) of the whole estimate and, with `by`, of each
    department (image units, stratified by department)."""
    layout = _design(bank, world.items, n, seed, ("department",), "image")
    scores = {item.id: float(v) for item, v in zip(world.items, y, strict=True)}
    found = _estimate(bank, RunDesign(Path("run"), layout, scores), "department" if by else None)
    rows = [("", float(y.mean()), *found.ci, found.extrapolating)]
    for d, name in enumerate(DEPARTMENTS):
        if by and name in found.by:
            cell = found.by[name]
            rows.append(
                (f" --by {name}", float(y[world.department == d].mean()), *cell["ci"], False)
            )
    return rows


def round4(args: argparse.Namespace) -> None:
    """Issue 45's cells: image units at n = 50 and 100 (inside the calibration range, just
    above it, far above it near the ceiling), --by department, and the extrapolating flag's
    firing rate outside the range (a model whose expected score beats every calibration
    model's), inside it (strengths uniform in [−0.8, 0.8] of the calibration's [−1, 1]) and
    well inside (|strength| ≤ 0.4)."""
    worlds, reps = (2, 30) if args.quick else (args.worlds, args.reps)
    cells: dict[str, list[tuple[float, float, float, float]]] = {}
    flags: dict[str, list[bool]] = {}
    for w in range(worlds):
        rng = np.random.default_rng(7000 + w)
        world = make_world(args.items, rng)
        bank = calibrate(world, rng)
        best = max(world.p_correct(s, k % 3, np.random.default_rng(k)).mean()
                   for k, s in enumerate(np.linspace(-1.0, 1.0, 20)))  # fmt: skip
        for rep in range(reps):
            models = {
                "inside": (float(rng.uniform(-0.8, 0.8)), int(rng.integers(0, 3))),
                "just above": (float(rng.uniform(1.2, 1.6)), int(rng.integers(0, 3))),
                "far above (ceiling)": (2.5, 3),
            }
            for name, (strength, family) in models.items():
                p = world.p_correct(strength, family, rng)
                y = (rng.random(len(p)) < p).astype(float)
                outside = p.mean() > best
                for n in (50, 100):
                    for suffix, truth, lo, hi, extra in round4_estimate(
                        world, bank, y, n, rep, n == 100 and name == "inside"
                    ):
                        key = f"{name}, n={n}{suffix}"
                        cells.setdefault(key, []).append((truth, lo, hi, float(extra)))
                        if not suffix:
                            side = "outside" if outside else "inside"
                            flags.setdefault(f"{side}, n={n}", []).append(extra)
                            if not outside and abs(strength) <= 0.4:
                                flags.setdefault(
                                    f"well inside (|strength| ≤ 0.4), n={n}", []
                                ).append(extra)
    print(f"estimate, image units: {worlds} worlds × {reps} reps; {args.items} items")
    for key, rows in cells.items():
        truth, lo, hi, _ = (np.array(col) for col in zip(*rows, strict=True))
        hit = ((lo <= truth) & (truth <= hi)).mean()
        print(f"  {key:34s} coverage {hit:.1%} ± {math.sqrt(hit * (1 - hit) / len(truth)):.1%}, "
              f"half-width {np.mean(hi - lo) / 2:.4f}")  # fmt: skip
    for side, fired in flags.items():
        rate = float(np.mean(fired)) if fired else math.nan
        print(
            f"  extrapolating flag, truly {side} the calibration range: fires {rate:.1%} of {len(fired)} runs"
        )


def audit_world(n_items: int, rng: np.random.Generator, n_models: int = 30) -> tuple[float, ...]:
    world = make_world(n_items, rng)
    truth = np.array([LETTERS.index(str(i.answer)) for i in world.items])
    flipped = rng.choice(n_items, round(0.02 * n_items), replace=False)
    key = truth.copy()
    key[flipped] = (truth[flipped] + rng.integers(1, 4, len(flipped))) % 4
    items = [Item(id=i.id, question="q", kind="choice", options=dict(i.options), answer=LETTERS[key[j]], meta=dict(i.meta))
             for j, i in enumerate(world.items)]  # fmt: skip
    attract = rng.dirichlet(np.ones(3), n_items)  # distractors are not equally tempting
    answers = np.empty((n_models, n_items), dtype=object)
    for m, strength in enumerate(np.linspace(-1.5, 2.0, n_models)):
        right = rng.random(n_items) < world.p_correct(float(strength), m % 3, rng)
        pick = np.array([rng.choice(3, p=attract[j]) for j in range(n_items)])
        wrong = (truth + 1 + pick) % 4
        answers[m] = [LETTERS[k] for k in np.where(right, truth, wrong)]
    scores = (answers == np.array([LETTERS[k] for k in key], dtype=object)[None, :]).astype(float)
    responses = Responses([f"m{k}" for k in range(n_models)], [Path(f"m{k}") for k in range(n_models)],
                          [{} for _ in range(n_models)], items, scores, answers)  # fmt: skip
    found = audit_responses(responses, fitted_model(responses), None)
    flagged_key = {row["id"] for row in found["items"] if "key" in row["flags"]}
    flipped_ids = {f"q{j}" for j in flipped}
    precision = len(flagged_key & flipped_ids) / max(len(flagged_key), 1)
    top = {row["id"] for row in found["items"][: 2 * len(flipped)]}
    recall = len(top & flipped_ids) / len(flipped_ids)
    rows = {row["id"]: row for row in found["items"]}
    suggested = np.mean([rows[f"q{j}"]["suggested_answer"] == LETTERS[truth[j]] for j in flipped])
    clean = [row for row in found["items"] if row["id"] not in flipped_ids]
    false_key = 1000 * sum("key" in row["flags"] for row in clean) / len(clean)
    false_any = 1000 * sum(row["flagged"] for row in clean) / len(clean)
    return (precision, recall, float(suggested), len(flagged_key & flipped_ids) / len(flipped_ids),
            false_key, false_any, float(len(flagged_key) > 0),
            found["summary"]["power"]["wrong_key_power"])  # fmt: skip


def audit_figures(args: argparse.Namespace) -> None:
    """Per number of models: the key flags' precision (worlds with a key flag), recall within
    the top 2 × flipped, suggested answers, flipped keys flagged, and false flags per 1,000
    clean items (key; any defect flag)."""
    for models in [int(m) for m in args.audit_models.split(",")]:
        rows = np.array([audit_world(args.items, np.random.default_rng(5000 + r), models)
                         for r in range(args.audit_reps)])  # fmt: skip
        print(f"audit: {args.audit_reps} worlds of {args.items} items, {models} models, "
              "2% keys flipped")  # fmt: skip
        names = ("recall (top 2×flipped)", "suggested = true key", "flipped flagged key",
                 "false key flags per 1,000 clean items", "false defect flags per 1,000 clean items",
                 "summary's power (wrong keys it would flag)")  # fmt: skip
        any_key = rows[:, 6] > 0
        precision = rows[any_key, 0]
        print(f"  precision (flag key): {precision.mean():.1%} over the {int(any_key.sum())} "
              f"worlds with a key flag" if any_key.any() else "  precision (flag key): no key flag")  # fmt: skip
        for name, col in zip(names, np.delete(rows, [0, 6], axis=1).T, strict=True):
            unit = "" if "per 1,000" in name else "%"
            value = col.mean() if unit == "" else 100 * col.mean()
            error = (col.std(ddof=1) if len(col) > 1 else 0) / math.sqrt(len(col))
            error = error if unit == "" else 100 * error
            print(f"  {name}: {value:.1f}{unit} ± {error:.1f}{unit} (s.e. over worlds)")


def fit_only(n_runs: int, n_items: int) -> None:
    rng = np.random.default_rng(0)
    theta, a, b = (
        rng.normal(0, 1, n_runs),
        rng.lognormal(0, 0.3, n_items),
        rng.normal(0, 1.2, n_items),
    )
    c = np.full(n_items, 0.25)
    y = (rng.random((n_runs, n_items)) < irt.probability(theta, a, b, c)).astype(float)
    items = [Item(id=f"q{j}", question="q", kind="choice", options={k: k for k in LETTERS}, answer="A")
             for j in range(n_items)]  # fmt: skip
    responses = Responses([f"m{k}" for k in range(n_runs)], [Path(f"m{k}") for k in range(n_runs)],
                          [{} for _ in range(n_runs)], items, y, np.full(y.shape, "", dtype=object))  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    content = bank_content(responses)  # what `items fit` does after reading the runs
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    fitted = np.array([content["runs"][f"m{k}"]["ability"] for k in range(n_runs)])
    b_hat = np.array([content["items"][f"q{j}"]["difficulty"] for j in range(n_items)])
    print(f"fit (held-out pass + full fit, as `items fit`): {n_runs} runs × {n_items} items: {seconds:.1f} s, "
          f"{content['fit']['iterations']} rounds in the full fit, converged {content['fit']['converged']}; "
          f"peak RSS {peak / 1024:.0f} MB (before the fit {before / 1024:.0f} MB); "
          f"corr(θ̂, θ) {np.corrcoef(fitted, theta)[0, 1]:.3f}, corr(b̂, b) {np.corrcoef(b_hat, b)[0, 1]:.3f}; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worlds", type=int, default=10)
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--units", default="item,image", help="designs to measure: item,image")
    parser.add_argument("--audit-reps", type=int, default=10)
    parser.add_argument(
        "--audit-models", default="8,12,24,30", help="numbers of models, e.g. 8,12,24"
    )
    parser.add_argument("--fit-items", type=int, default=26000)
    parser.add_argument("--fit-runs", type=int, default=50)
    parser.add_argument("--only", choices=("estimate", "round4", "audit", "fit", "fit-child"),
                        default=None)  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="round4: 2 worlds × 30 reps")
    args = parser.parse_args()
    if args.only == "fit-child":
        fit_only(args.fit_runs, args.fit_items)
        return
    if args.only in (None, "fit"):
        subprocess.run([sys.executable, __file__, "--only", "fit-child", "--fit-runs", str(args.fit_runs),
                        "--fit-items", str(args.fit_items)], check=True)  # fmt: skip
    if args.only in (None, "estimate"):
        coverage(args)
    if args.only in (None, "round4"):
        round4(args)
    if args.only in (None, "audit"):
        audit_figures(args)


if __name__ == "__main__":
    main()
