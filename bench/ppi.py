"""Human-anchored judged scores by simulation (issue 22): coverage, bias and width of the
PPI-calibrated score that `medlens agreement --human` reports.

    .venv/bin/python bench/ppi.py [--reps 1000] [--seed 20240522] [--design item|image|both]

Each repetition draws a benchmark of 2,000 items on 500 images (4 questions each): image
difficulty Beta(1.4, 0.933) (mean 0.6, intra-image correlation 0.3), the true (human) score
y ~ Bernoulli(difficulty), and a judge biased against the truth: it misses 20% of the correct
answers and accepts 5% of the wrong ones (its mean is 0.5 against the truth's 0.6). People label
a random 2%, 5% or 10% of the items (``item``; ``image``: whole images). The calibrated score is
``judges.calibration.calibrated_score`` exactly as the agreement command calls it (PPI++,
cluster-robust over images, t(G_L − 1), enveloped with Wilson-cc at the effective
sample size for 0/1 verdicts). Printed per cell: coverage of the 95% interval for the
superpopulation mean μ = 0.6 and for the benchmark's own human mean θ_N (± Monte-Carlo s.e.),
bias of the calibrated and of the raw judged mean in points, and the mean interval width beside
the human-only interval on the same labels (the interval medlens gives a cell of those labels:
``bootstrap.group_cis``, Wilson-cc enveloped with the cluster-robust t(G − 1) interval).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from medlens.judges.calibration import calibrated_score

IMAGES, PER_IMAGE, MU = 500, 4, 0.6
MISS, FALSE_ACCEPT = 0.20, 0.05
FRACTIONS = (0.02, 0.05, 0.10)


def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(human truth y, judge verdict f, image of each item) for one benchmark."""
    icc = 0.3
    a, b = MU * (1 / icc - 1), (1 - MU) * (1 / icc - 1)
    difficulty = rng.beta(a, b, IMAGES)
    image = np.repeat(np.arange(IMAGES), PER_IMAGE)
    y = (rng.random(image.size) < difficulty[image]).astype(float)
    accept = np.where(y == 1, rng.random(y.size) >= MISS, rng.random(y.size) < FALSE_ACCEPT)
    return y, accept.astype(float), image


def labelled(
    rng: np.random.Generator, image: np.ndarray, fraction: float, design: str
) -> np.ndarray:
    """Indices of the items people label: a simple random sample of items, or of images."""
    if design == "item":
        return rng.choice(image.size, round(fraction * image.size), replace=False)
    chosen = rng.choice(IMAGES, round(fraction * IMAGES), replace=False)
    return np.flatnonzero(np.isin(image, chosen))


def repetition(
    rng: np.random.Generator, fraction: float, design: str
) -> tuple[float, float, float, float, float, float, float]:
    """(θ_N, estimate, lo, hi, human lo, human hi, raw judged mean) of one draw."""
    y, f, image = draw(rng)
    ids = [f"i{k}" for k in range(y.size)]
    chosen = labelled(rng, image, fraction, design)
    found = calibrated_score(
        {i: float(v) for i, v in zip(ids, f, strict=True)},
        ids,
        {ids[k]: float(y[k]) for k in chosen},
        {i: f"m{g}" for i, g in zip(ids, image, strict=True)},
    )
    human = found["human_only"]["ci"]
    lo, hi = found["ci"]
    return float(y.mean()), found["score"], lo, hi, human[0], human[1], float(f.mean())


def cell(reps: int, seed: int, fraction: float, design: str) -> dict[str, float]:
    rng = np.random.default_rng([seed, round(fraction * 1000), design == "image"])
    rows = np.array([repetition(rng, fraction, design) for _ in range(reps)])
    theta, estimate, lo, hi, human_lo, human_hi, raw = rows.T
    mu = np.full(reps, MU)
    return {
        "cover_mu": float(np.mean((lo <= mu) & (mu <= hi))),
        "cover_theta": float(np.mean((lo <= theta) & (theta <= hi))),
        "bias": float(np.mean(estimate - MU)),
        "bias_theta": float(np.mean(estimate - theta)),
        "raw_bias": float(np.mean(raw - MU)),
        "width": float(np.mean(hi - lo)),
        "human_width": float(np.mean(human_hi - human_lo)),
        "human_cover": float(np.mean((human_lo <= mu) & (mu <= human_hi))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20240522)
    parser.add_argument("--design", choices=("item", "image", "both"), default="both")
    args = parser.parse_args()
    designs = ("item", "image") if args.design == "both" else (args.design,)
    mc = math.sqrt(0.95 * 0.05 / args.reps)
    print(
        f"{args.reps} repetitions per cell, seed {args.seed}; 2,000 items on 500 images; judge "
        f"misses {MISS:.0%} of correct answers, accepts {FALSE_ACCEPT:.0%} of wrong ones"
    )
    print(f"Monte-Carlo s.e. of a 95% coverage: {mc:.4f} (so ≥ {0.95 - 2 * mc:.3f} is on target)")
    header = (
        f"{'labels':>17} {'cover μ':>8} {'cover θ_N':>9} {'bias pts':>8} {'raw bias':>8} "
        f"{'width':>6} {'human':>6} {'ratio':>5} {'human cover':>11}"
    )
    print(header)
    started = time.perf_counter()
    for design in designs:
        for fraction in FRACTIONS:
            c = cell(args.reps, args.seed, fraction, design)
            label = f"{design} {fraction:.0%} (n={round(fraction * IMAGES * PER_IMAGE)})"
            print(
                f"{label:>17} {c['cover_mu']:8.3f} {c['cover_theta']:9.3f} "
                f"{100 * c['bias']:+8.2f} {100 * c['raw_bias']:+8.2f} {c['width']:6.3f} "
                f"{c['human_width']:6.3f} {c['width'] / c['human_width']:5.2f} "
                f"{c['human_cover']:11.3f}",
                flush=True,
            )
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
