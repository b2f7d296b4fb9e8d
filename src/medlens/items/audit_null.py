"""p-values of the item audit's defect flags, so that ``items audit`` can give its flags a
false-discovery-rate guarantee (Benjamini–Hochberg q-values, ``items.audit``).

- **An other option draws the abler runs** (the ``key`` and ``ambiguous`` flags): for each
  option d other than the key, how much abler d's choosers are than the key's,
  Σ_runs z·([chose d] − [chose the key]) standardised under the null; the item's statistic is
  the largest. Null: which run chose which
  answer is unrelated to ability — a permutation test (the runs' answers shuffled among the
  runs that answered). On a sound item a wrong option is chosen less the abler the run (the
  item model's own picture: P(right) rises with ability, so the wrong options' share falls),
  which makes the test conservative there; a wrong key's true answer is chosen more the abler
  the run. Popularity alone (a tempting distractor on a hard item, chosen by weak and strong
  runs alike) is no evidence: the first audit, which compared weighted shares, marked ~40% of
  clean items with 8–12 runs, mostly hard ones.
- **The wrong answers agree**: the ability-weighted count of the other option most chosen,
  against an ordinary item of the observed difficulty (the guessing floor kept) whose wrong
  answers spread over the options as the benchmark's do (a Dirichlet fitted on its items). A
  flipped key on an easy item has few choosers of the key, so the permutation test sees
  little; the abler runs agreeing on one other option is what shows it. The item's p-value is
  twice the smaller of the two (Bonferroni: valid whatever their dependence).
- **Misfit**: the infit mean square under the item's own fitted parameters; its null the same
  model's answers (a parametric bootstrap).

Each p-value is (1 + hits)/(1 + draws), drawn in rounds of 199, 1,999, 19,999 and 199,999, an
item going on to the next round while it has at most 5 hits (a p-value near the
Benjamini–Hochberg bar is resolved, the others cost little; the misfit test stops at 19,999).
With 8 runs the permutation test cannot go below 2/70 on any item, and the agreement test
rarely reaches the bar a flag needs over hundreds of items: the audit then flags next to
nothing, and ``audit_power`` says how often it would catch a wrong key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medlens.items import irt
from medlens.items.responses import Responses, answer_text

ROUNDS = (199, 1_999, 19_999, 199_999)
MAX_HITS = 5
"""An item is drawn again, with the next round's size, while its hits are at most this."""
_CELLS = 4_000_000
"""Simulated (draw, run) cells held at once."""


@dataclass(frozen=True)
class ItemNull:
    """What the tests need of every item, as arrays over (runs, items)."""

    answered: np.ndarray
    """(runs, items) the run gave an answer."""
    scored: np.ndarray
    """(runs, items) the run has a score (it counts in the infit)."""
    right: np.ndarray
    """(runs, items) the run's score is 1."""
    choice: np.ndarray
    """(runs, items) the other option a wrong answer chose (index into the item's other
    options; −1: right, unanswered, or no listed option)."""
    width: int
    """Other options of the item with the most."""
    options: np.ndarray
    """(items,) each item's number of other options."""
    fitted_right: np.ndarray
    """(runs, items) P(right) under the item's own fitted parameters."""
    null_right: np.ndarray
    """(runs, items) P(right) under the agreement test's null (an ordinary item of the observed
    difficulty, never below the guessing floor)."""
    concentration: float
    """α of the symmetric Dirichlet the wrong answers' shares are drawn from, fitted on the
    benchmark's items."""


@dataclass(frozen=True)
class NullTests:
    """Per item: the permutation test's statistic, the other-option p-value (twice the smaller
    of the permutation and agreement tests') and the misfit p-value (NaN where there is no
    test)."""

    statistic: np.ndarray
    distractor: np.ndarray
    misfit: np.ndarray


def item_null(responses: Responses, theta: np.ndarray, a: np.ndarray, b: np.ndarray,
              c: np.ndarray) -> ItemNull:  # fmt: skip
    """The observed answers coded for the tests, and P(right) under the fitted item model."""
    scores = responses.scores
    answered = (responses.answers != "") & ~np.isnan(scores)
    right = (np.nan_to_num(scores) >= 1.0) & answered
    others = [
        _other_options(item, responses.answers[:, j]) for j, item in enumerate(responses.items)
    ]
    choice = np.full(scores.shape, -1, dtype=np.int64)
    for j, names in enumerate(others):
        column = responses.answers[:, j]
        for k, name in enumerate(names):
            choice[answered[:, j] & ~right[:, j] & (column == name), j] = k
    width = max((len(o) for o in others), default=1) or 1
    typical = float(np.median(a[a > 0])) if (a > 0).any() else 1.0
    a0 = np.maximum(a, typical)
    b0 = matched_difficulty(theta, a0, c, answered, right.sum(axis=0))
    return ItemNull(
        answered, ~np.isnan(scores), right, choice, width, np.array([len(o) for o in others]),
        irt.probability(theta, a, b, c), irt.probability(theta, a0, b0, c),
        concentration(choice, answered & ~right, width),
    )  # fmt: skip


def matched_difficulty(
    theta: np.ndarray, a: np.ndarray, c: np.ndarray, answered: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """Per item the difficulty b in [−8, 8] at which the answering runs' expected number right
    is the observed one (bisection; monotone in b); 8 (the guessing floor) when fewer are right
    than guessing gives."""
    low, high = np.full(a.size, -8.0), np.full(a.size, 8.0)
    for _ in range(60):
        middle = (low + high) / 2
        expected = (irt.probability(theta, a, middle, c) * answered).sum(axis=0)
        too_easy = expected > right
        low, high = np.where(too_easy, middle, low), np.where(too_easy, high, middle)
    return (low + high) / 2


def concentration(choice: np.ndarray, wrong: np.ndarray, width: int) -> float:
    """α of a symmetric Dirichlet over the other options whose expected repeat probability
    (α + 1)/(Kα + 1) is the median over items of the wrong answers' observed one
    (Σ n_d(n_d − 1)/(w(w − 1))); robust to the few items with a wrong key."""
    repeats = []
    for j in range(choice.shape[1]):
        counts = np.bincount(choice[wrong[:, j], j][choice[wrong[:, j], j] >= 0], minlength=width)
        w = int(counts.sum())
        if w >= 2:
            repeats.append(float((counts * (counts - 1)).sum()) / (w * (w - 1)))
    r = float(np.median(repeats)) if repeats else 1.0 / max(width, 1)
    if width < 2 or width * r <= 1:
        return 50.0
    return float(np.clip((1 - r) / (width * r - 1), 0.05, 50.0))


def _other_options(item: object, column: np.ndarray) -> list[str]:
    """The item's options other than its key (its letters; for an item without options, the
    other answers the runs gave)."""
    key = answer_text(getattr(item, "answer", None))
    listed = list(getattr(item, "options", {}) or {})
    seen = sorted({str(x) for x in column.tolist() if x and str(x) != key})
    return [o for o in listed if o != key] or seen


def null_tests(null: ItemNull, theta: np.ndarray, seed: int = 0) -> NullTests:
    """Both tests' p-values for every item (module docstring); `theta` the runs' abilities."""
    rng = np.random.default_rng(seed)
    items = null.answered.shape[1]
    statistic, distractor = np.full(items, -np.inf), np.ones(items)
    for j in range(items):
        statistic[j], distractor[j] = permutation(
            theta, null.answered[:, j], null.right[:, j], null.choice[:, j], null.width, rng
        )
    weights = 1 / (1 + np.exp(-2 * (theta - np.median(theta)))) if theta.size else theta
    agreed = agreement(null, weights, rng)
    combined = np.minimum(1.0, 2 * np.minimum(distractor, agreed))  # Bonferroni over the two
    return NullTests(statistic, combined, _misfit(null, rng))


def _standardised(z: np.ndarray, chose: np.ndarray, key: np.ndarray) -> np.ndarray:
    """(…, options) standardised contrasts Σ z·([chose d] − [chose the key]) of `z` (…, n) for
    each other option's choosers `chose` (n, options) against the key's `key` (n,), under the
    permutation distribution (Var = SS/(n(n − 1))·[k_d(n − k_d) + k_key(n − k_key) + 2k_d·k_key]);
    −inf for an option nobody chose."""
    n = chose.shape[0]
    k, k_key = chose.sum(axis=0), float(key.sum())
    centred = z - z.mean(axis=-1, keepdims=True)
    squares = float((centred.reshape(-1, n)[0] ** 2).sum())  # the same in every permutation
    variance = squares / max(n * (n - 1), 1) * (k * (n - k) + k_key * (n - k_key) + 2 * k * k_key)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (centred @ (chose - key[:, None])) / np.sqrt(variance)
    return np.where((k > 0) & (variance > 0), out, -np.inf)


def permutation(
    theta: np.ndarray, answered: np.ndarray, right: np.ndarray, choice: np.ndarray, width: int,
    rng: np.random.Generator,
) -> tuple[float, float]:  # fmt: skip
    """The item's statistic and its permutation p-value (module docstring)."""
    z = theta[answered]
    chose = (choice[answered][:, None] == np.arange(width)[None, :]).astype(float)
    key = right[answered].astype(float)
    if z.size < 2 or not chose.any():
        return -np.inf, 1.0
    observed = float(_standardised(z, chose, key).max())
    if not np.isfinite(observed):
        return observed, 1.0
    hits = draws = 0
    batch = max(1, _CELLS // z.size)
    for size in ROUNDS:
        for first in range(0, size, batch):
            count = min(batch, size - first)
            order = rng.permuted(np.broadcast_to(np.arange(z.size), (count, z.size)), axis=1)
            hits += int((_standardised(z[order], chose, key).max(axis=-1) >= observed - 1e-9).sum())
        draws += size
        if hits > MAX_HITS:
            break
    return observed, (1 + hits) / (1 + draws)


def agreement(
    null: ItemNull, weights: np.ndarray, rng: np.random.Generator, enough: float = 0.0
) -> np.ndarray:
    """p-values of "the wrong answers agree on one option more than an ordinary item's do": the
    most chosen other option's count, each run counted with its ability weight σ(2(θ − median θ))
    (the abler runs agreeing on another option is what a wrong key looks like), against the item
    model (P(right) of an ordinary item of the observed difficulty, never below the guessing
    floor) with the wrong answers' shares drawn from the benchmark's Dirichlet. Items where no
    two wrong answers agree are not tested (p = 1). An item whose p-value is already ≤ `enough`
    is drawn no further (a power estimate needs no finer p-value)."""
    wrong_answers = null.answered & ~null.right
    observed = _most_chosen(wrong_answers, null.choice, null.width, weights)
    agreeing = _most_chosen(wrong_answers, null.choice, null.width, np.ones_like(weights))
    hits, draws = np.zeros(observed.size), np.zeros(observed.size)
    pending = np.flatnonzero(agreeing >= 2)
    runs = null.answered.shape[0]
    gate = np.arange(null.width)[None, :] < null.options[:, None]  # (items, width)
    for size in ROUNDS:
        step = max(1, _CELLS // max(size * runs, 1))
        for first in range(0, pending.size, step):
            part = pending[first : first + step]
            answered = np.broadcast_to(null.answered[:, part], (size, runs, part.size))
            wrong = answered & (rng.random(answered.shape) >= null.null_right[:, part])
            shares = rng.gamma(null.concentration, size=(size, part.size, null.width)) * gate[part]
            cumulative = np.cumsum(
                shares / np.maximum(shares.sum(axis=-1, keepdims=True), 1e-300), axis=-1
            )
            pick = (rng.random(answered.shape)[..., None] > cumulative[:, None, :, :]).sum(axis=-1)
            simulated = _most_chosen(wrong, np.minimum(pick, null.width - 1), null.width, weights)
            hits[part] += (simulated >= observed[part][None, :] - 1e-9).sum(axis=0)
            draws[part] += size
        pending = pending[
            (hits[pending] <= MAX_HITS) & ((1 + hits[pending]) / (1 + draws[pending]) > enough)
        ]
    return np.where(agreeing >= 2, (1 + hits) / np.maximum(1 + draws, 1), 1.0)


def _most_chosen(
    wrong: np.ndarray, choice: np.ndarray, width: int, weights: np.ndarray
) -> np.ndarray:
    """The weighted count of the other option most chosen by the wrong answers (runs on axis
    −2, each weighing `weights`)."""
    w = weights[:, None]
    return np.stack(
        [((wrong & (choice == k)) * w).sum(axis=-2) for k in range(width)], axis=-1
    ).max(axis=-1)


def _infit(scored: np.ndarray, y: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Infit mean square Σ(y − p)²/Σp(1 − p) over the scored runs; NaN below 1 expected."""
    expected = (p * (1 - p) * scored).sum(axis=-2)
    squares = ((y - p) ** 2 * scored).sum(axis=-2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(expected >= 1.0, squares / expected, np.nan)


def _misfit(null: ItemNull, rng: np.random.Generator) -> np.ndarray:
    """The misfit p-values (NaN: no infit), by simulation from the fitted model."""
    observed = _infit(null.scored, null.right.astype(float), null.fitted_right)
    hits, draws = np.zeros(observed.size), np.zeros(observed.size)
    pending = np.flatnonzero(np.isfinite(observed))
    runs = null.scored.shape[0]
    for size in ROUNDS[:3]:
        step = max(1, _CELLS // max(size * runs, 1))
        for first in range(0, pending.size, step):
            part = pending[first : first + step]
            p = null.fitted_right[:, part]
            y = (rng.random((size, *p.shape)) < p).astype(float)
            simulated = _infit(
                np.broadcast_to(null.scored[:, part], y.shape), y, np.broadcast_to(p, y.shape)
            )
            hits[part] += (simulated >= observed[part][None, :] - 1e-12).sum(axis=0)
            draws[part] += size
        pending = pending[hits[pending] <= MAX_HITS]
    return np.where(np.isfinite(observed), (1 + hits) / np.maximum(1 + draws, 1), np.nan)
