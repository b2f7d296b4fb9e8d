"""What the item audit can see with the runs it has: how often a wrong key on one of the
benchmark's own items would be flagged (the summary's ``power``, ``items.audit_summary``).

A wrong key is simulated on a sample of the benchmark's items, with the audited runs'
abilities and the fitted item model: a run knows the true answer with the item's fitted
P(right) and then chooses it (an option other than the key); a run that does not know chooses
among the key and the remaining options with shares drawn from the benchmark's Dirichlet
(``audit_null.concentration``). Each simulated item gets the audit's own test
(``audit_null``: twice the smaller of the permutation and the agreement p-values), and the
power is the share whose p-value clears the Benjamini–Hochberg bar the audit used. With 8 runs
it is near 0 on most benchmarks, which is why the audit then flags (almost) nothing.
"""

from __future__ import annotations

import numpy as np

from medlens.items import irt
from medlens.items.audit_null import ItemNull, agreement, matched_difficulty, permutation

SAMPLE = 200
"""Items a wrong key is simulated on (all of them on a smaller benchmark)."""


def wrong_key_power(
    null: ItemNull, theta: np.ndarray, a: np.ndarray, c: np.ndarray, bar: float, seed: int = 1
) -> float:
    """The share of simulated wrong keys whose p-value is ≤ `bar` (module docstring); 0.0 when
    no item has two answering runs and another option."""
    rng = np.random.default_rng(seed)
    candidates = np.flatnonzero((null.options >= 1) & (null.answered.sum(axis=0) >= 2))
    if candidates.size == 0:
        return 0.0
    pick = np.sort(rng.choice(candidates, min(SAMPLE, candidates.size), replace=False))
    flipped = _flipped(null, pick, rng)
    typical = float(np.median(a[a > 0])) if (a > 0).any() else 1.0
    a0, c0 = np.maximum(a[pick], typical), c[pick]
    b0 = matched_difficulty(theta, a0, c0, flipped.answered, flipped.right.sum(axis=0))
    flipped = ItemNull(
        flipped.answered, flipped.scored, flipped.right, flipped.choice, flipped.width,
        flipped.options, flipped.fitted_right, irt.probability(theta, a0, b0, c0),
        flipped.concentration,
    )  # fmt: skip
    weights = 1 / (1 + np.exp(-2 * (theta - np.median(theta))))
    agreed = agreement(flipped, weights, rng, enough=bar / 2)
    shuffled = np.array(
        [
            permutation(theta, flipped.answered[:, i], flipped.right[:, i],
                        flipped.choice[:, i], flipped.width, rng)[1]
            for i in range(pick.size)
        ]
    )  # fmt: skip
    p = np.minimum(1.0, 2 * np.minimum(agreed, shuffled))
    return float(np.mean(p <= bar))


def _flipped(null: ItemNull, pick: np.ndarray, rng: np.random.Generator) -> ItemNull:
    """The picked items' answers had their keys been wrong: the true answer is other option 0;
    the key is a distractor among the rest (the null's P(right) is filled in by the caller)."""
    answered = null.answered[:, pick]
    knows = rng.random(answered.shape) < null.fitted_right[:, pick]
    options = null.options[pick]  # the key and options 1 … options − 1 tempt who does not know
    gate = np.arange(null.width)[None, :] < options[:, None]
    shares = rng.gamma(null.concentration, size=(pick.size, null.width)) * gate
    cumulative = np.cumsum(shares / np.maximum(shares.sum(axis=1, keepdims=True), 1e-300), axis=1)
    draw = (rng.random(answered.shape)[..., None] > cumulative[None, :, :]).sum(axis=-1)
    draw = np.minimum(draw, options[None, :] - 1)  # 0: the key; d ≥ 1: other option d
    right = answered & ~knows & (draw == 0)
    choice = np.where(answered & knows, 0, np.where(answered & ~right, draw, -1))
    return ItemNull(
        answered, null.scored[:, pick], right, choice.astype(np.int64), null.width, options,
        null.fitted_right[:, pick], null.fitted_right[:, pick], null.concentration,
    )  # fmt: skip
