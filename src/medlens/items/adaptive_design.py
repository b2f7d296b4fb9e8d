"""Sequential active sampling of a benchmark's items with known selection probabilities, and the
full-benchmark score it estimates (numbers only).

Vectorised over replicates (leading axis R): ``medlens run --adaptive`` steps one replicate,
``bench/adaptive.py`` steps a thousand at once through the same functions.

**Design.** Items are asked in batches. Before batch t, a predictor of this run's score on every
item is fitted on the answers so far (:func:`fit`): the bank's item response curve at the run's
ability, with an ability offset per group of items (ridge-shrunk) and, given a baseline run, a
term in the baseline's score on the item; without a bank, a logistic model in the group and the
baseline's score. From the predictions f and a variance v_j = f_j(1 − f_j) × the group's
observed/predicted residual ratio (so a group where the bank errs more than it claims gets more
calls), each draw of the batch picks one of the items not asked yet, item j with probability

    q_j = (1 − η) √v_j / Σ √v  +  η / (items left),        η = FLOOR_SHARE

(sampling towards the items whose answer the predictor is least sure of; every item keeps the
floor η / items left). Draws within a batch are without replacement, each from the items left.

**Estimator.** With S the summed scores of the items asked before draw k, R_k the items left
at draw k (the drawn one included), f the batch's predictions and N the benchmark's size, each
draw gives

    φ_k = [ S + Σ_{j ∈ R_k} f_j + (y_I − f_I) / q_I ] / N

whose expectation given everything before the draw is the full-benchmark score μ, whatever the
predictor (a Horvitz–Thompson correction of the predicted total of the items left). So the
φ_k − μ are martingale differences: μ̂ = mean φ_k is unbiased at any fixed number of calls, for
any model and any bank, and as items are used up the sum over R_k shrinks (the finite-population
correction comes with it).

**Variance and interval.** Martingale differences are uncorrelated, so Σ (φ_k − μ̂)² / (T(T − 1))
estimates Var(μ̂) without bias; the predictor's own account of it, Σ_k V_k / T² with
V_k = [Σ_{R_k} v_j / q_j − Σ_{R_k} v_j] / N², is computed before each draw and so does not move
with the answers drawn. SE is the larger of the two: a streak of answers that happen to agree
with the predictor cannot shrink the interval below what the predictor itself expects. The
interval is μ̂ + s ± t·SE, clipped to [0, 1], with two second-order terms for the heavy, skewed
increments a sure-but-wrong prediction gives (a rare large (y − f)/q):

- t is Student's at the variance estimate's effective degrees of freedom 2 / (Σc⁴/(Σc²)² − 1/T),
  c = φ − μ̂ (Satterthwaite's: 2T/(κ − 1) for kurtosis κ; T − 1 at most);
- s = γ (2t² + 1)/6 · SE moves the interval against the skewness γ of the mean (the Edgeworth
  correction of the studentised mean, Hall 1992), γ = Σc³/(Σc²)^{3/2} or the predictor's
  Σ κ₃ₖ / (Σ Vₖ)^{3/2}, whichever is larger in size (before any surprise has been seen, only the
  predictor knows the tail is there).

**Stopping.** The run stops at the first batch end where t·SE ≤ the target half-width (after
``MIN_CALLS`` answers) or the cap is reached. The rule looks at the variance estimate only, not
at the estimate: a fixed-width sequential interval (Chow & Robbins 1965), whose coverage tends to
the nominal level as the target shrinks (Anscombe's theorem carries the martingale CLT to the
random stopping time). A confidence sequence valid at every time (Waudby-Smith & Ramdas; the
asymptotic CS of Zrnic & Candès's active inference) would also allow stopping on the estimate
itself, at about 2.4× the calls for the same width — more than a random sample needs here.
The finite-sample coverage is checked by simulation (``bench/adaptive.py``, docs/statistics.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.special import stdtrit

from medlens.items import adaptive_predictor as predictor
from medlens.items.adaptive_predictor import ItemModel

__all__ = ["DesignState", "Interval", "ItemModel", "absorb", "choose", "fit", "interval",
           "predictions", "selection", "start_state", "take"]  # fmt: skip

FLOOR_SHARE = 0.2
"""η: the share of every draw spread uniformly over the items left."""
MIN_VARIANCE = 1e-4
"""Floor of v_j, so an item predicted with certainty keeps a share of the design's attention."""
CHECK_PRIOR = 1.0
"""Pseudo-items in each check cell's observed/predicted residual ratio (1 before any answer)."""


@dataclass
class DesignState:
    """What the design has asked so far, per replicate (arrays with a leading axis R)."""

    ability: np.ndarray
    """(R, 1 + G): the run's ability on the bank and its group offsets."""
    calibration: np.ndarray
    """(R, K): the second stage's coefficients."""
    order: np.ndarray
    """(R, T) the asked items' indices, in the order drawn."""
    probability: np.ndarray
    """(R, T) each draw's selection probability q_I."""
    prediction: np.ndarray
    """(R, T) f_I at the draw."""
    rest: np.ndarray
    """(R, T) Σ_{R_k} f_j: the predicted total of the items left at the draw (drawn one included)."""
    model_variance: np.ndarray
    """(R, T) V_k, the predictor's variance of φ_k (module docstring)."""
    scores: np.ndarray
    """(R, T) the answers' scores y_I (NaN until answered)."""
    model_third: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    """(R, T) the predictor's third central moment of φ_k."""
    batches: list[int] = field(default_factory=list)
    """Size of each batch, in order."""
    residual_sq: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    """(R, n_cells) Σ (y − f)² of answered draws per check cell."""
    predicted_sq: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    """(R, n_cells) Σ f(1 − f) of the same draws."""

    @property
    def calls(self) -> int:
        return int(self.order.shape[1])


def start_state(model: ItemModel, replicates: int) -> DesignState:
    """No item asked yet."""
    ability, calibration = predictor.start_params(model, replicates)
    empty = np.zeros((replicates, 0))
    return DesignState(
        ability=ability, calibration=calibration, order=np.zeros((replicates, 0), dtype=np.int64),
        probability=empty, prediction=empty, rest=empty, model_variance=empty, scores=empty,
        model_third=empty, residual_sq=np.zeros((replicates, model.n_cells)),
        predicted_sq=np.zeros((replicates, model.n_cells)),
    )  # fmt: skip


def fit(model: ItemModel, state: DesignState) -> tuple[np.ndarray, np.ndarray]:
    """The predictor's parameters refitted on the answered draws (warm-started from the state's)."""
    return predictor.fit(model, state.ability, state.calibration, state.order, state.scores)


def predictions(model: ItemModel, state: DesignState) -> np.ndarray:
    """(R, N): the predicted score of every item at the state's parameters."""
    return predictor.predictions(model, state.ability, state.calibration)


def _variances(model: ItemModel, state: DesignState, f: np.ndarray) -> np.ndarray:
    """v_j: f(1 − f), floored, times the item's check cell's observed/predicted residual ratio."""
    ratio = (state.residual_sq + CHECK_PRIOR) / (state.predicted_sq + CHECK_PRIOR)
    return np.maximum(f * (1 - f), MIN_VARIANCE) * ratio[:, model.cell]


def selection(spread: np.ndarray, left: np.ndarray) -> np.ndarray:
    """(R, N) one draw's probabilities: (1 − η) √v_j / Σ √v + η / (items left), over `left`."""
    count = left.sum(axis=1, keepdims=True)
    sd = np.where(left, spread, 0.0)
    share = (1 - FLOOR_SHARE) * sd / sd.sum(axis=1, keepdims=True) + FLOOR_SHARE / count
    return np.asarray(np.where(left, share, 0.0))


@dataclass(frozen=True)
class _Draw:
    """One draw of a batch, per replicate."""

    item: np.ndarray
    probability: np.ndarray
    prediction: np.ndarray
    rest: np.ndarray
    variance: np.ndarray
    third: np.ndarray


def _draw(f: np.ndarray, v: np.ndarray, left: np.ndarray, u: np.ndarray, n: int) -> _Draw:
    """Pick one of the items `left` per replicate (u: (R,) uniforms) and what φ needs of it."""
    q = selection(np.sqrt(v), left)
    cumulative = np.cumsum(q, axis=1)
    chosen = np.argmax(cumulative > u[:, None] * cumulative[:, -1:], axis=1)
    rows = np.arange(len(u))
    safe_q = np.where(left, q, 1.0)
    third = f * (1 - f) * (1 - 2 * f)
    return _Draw(
        item=chosen, probability=q[rows, chosen], prediction=f[rows, chosen],
        rest=np.where(left, f, 0.0).sum(axis=1),
        variance=np.where(left, v / safe_q - v, 0.0).sum(axis=1) / n**2,
        third=np.where(left, third / safe_q**2, 0.0).sum(axis=1) / n**3,
    )  # fmt: skip


def choose(model: ItemModel, state: DesignState, draws: np.ndarray) -> DesignState:
    """The next batch: one item per column of `draws` ((R, B) uniforms in [0, 1)), each drawn
    from the items left with the design's probabilities; scores are NaN until :func:`absorb`."""
    replicates, size = draws.shape
    ability, calibration = fit(model, state)
    f = predictions(model, replace(state, ability=ability, calibration=calibration))
    v = _variances(model, state, f)
    left = np.ones((replicates, model.n_items), dtype=bool)
    left[np.arange(replicates)[:, None], state.order] = False
    batch = []
    for k in range(size):
        batch.append(_draw(f, v, left, draws[:, k], model.n_items))
        left[np.arange(replicates), batch[-1].item] = False

    def grown(old: np.ndarray, key: str) -> np.ndarray:
        return np.concatenate([old, np.stack([getattr(d, key) for d in batch], axis=1)], axis=1)

    return DesignState(
        ability=ability, calibration=calibration, order=grown(state.order, "item"),
        probability=grown(state.probability, "probability"),
        prediction=grown(state.prediction, "prediction"), rest=grown(state.rest, "rest"),
        model_variance=grown(state.model_variance, "variance"),
        model_third=grown(state.model_third, "third"),
        scores=np.concatenate([state.scores, np.full((replicates, size), np.nan)], axis=1),
        batches=[*state.batches, size], residual_sq=state.residual_sq,
        predicted_sq=state.predicted_sq,
    )  # fmt: skip


def absorb(model: ItemModel, state: DesignState, scores: np.ndarray) -> DesignState:
    """The last batch's answers ((R, B) scores in [0, 1]) entered into the state."""
    size = state.batches[-1]
    new = state.scores.copy()
    new[:, -size:] = scores
    f = state.prediction[:, -size:]
    cells = model.cell[state.order[:, -size:]]
    residual_sq, predicted_sq = state.residual_sq.copy(), state.predicted_sq.copy()
    rows = np.broadcast_to(np.arange(len(scores))[:, None], cells.shape)
    np.add.at(residual_sq, (rows, cells), (scores - f) ** 2)
    np.add.at(predicted_sq, (rows, cells), f * (1 - f))
    return DesignState(
        ability=state.ability, calibration=state.calibration, order=state.order, probability=state.probability,
        prediction=state.prediction, rest=state.rest, model_variance=state.model_variance,
        model_third=state.model_third, scores=new, batches=state.batches, residual_sq=residual_sq, predicted_sq=predicted_sq,
    )  # fmt: skip


def increments(model: ItemModel, state: DesignState) -> np.ndarray:
    """(R, T): φ_k of every answered draw (module docstring)."""
    y = state.scores
    before = np.cumsum(y, axis=1) - y
    correction = (y - state.prediction) / state.probability
    return np.asarray((before + state.rest + correction) / model.n_items)


@dataclass(frozen=True)
class Interval:
    """The estimate after T calls, per replicate."""

    estimate: np.ndarray
    se: np.ndarray
    empirical_se: np.ndarray
    model_se: np.ndarray
    half_width: np.ndarray
    low: np.ndarray
    high: np.ndarray


def interval(model: ItemModel, state: DesignState, level: float = 0.95) -> Interval:
    """μ̂ (the mean increment), its standard error (the larger of the empirical and the
    predictor's), and μ̂ ± t·SE moved by the increments' skewness, t at the variance's effective
    degrees of freedom (T ≥ 2; module docstring)."""
    phi = increments(model, state)
    calls = phi.shape[1]
    estimate = phi.mean(axis=1)
    centred = phi - estimate[:, None]
    second = np.sum(centred**2, axis=1)
    empirical = np.sqrt(second / (calls * (calls - 1)))
    model_var = np.maximum(state.model_variance.sum(axis=1), 1e-300)
    predicted = np.sqrt(model_var) / calls
    se = np.maximum(empirical, predicted)
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = np.where(second > 0, np.sum(centred**3, axis=1) / second**1.5, 0.0)
        spread = np.where(second > 0, np.sum(centred**4, axis=1) / second**2 - 1 / calls, 0.0)
    expected_skew = state.model_third.sum(axis=1) / model_var**1.5
    skew = np.where(np.abs(expected_skew) > np.abs(skew), expected_skew, skew)
    df = np.clip(2 / np.maximum(spread, 1e-12), 2.0, calls - 1)
    quantile = stdtrit(df, 1 - (1 - level) / 2)
    centre = estimate + skew * (2 * quantile**2 + 1) / 6 * se
    half = quantile * se
    return Interval(
        estimate=estimate, se=se, empirical_se=empirical, model_se=predicted, half_width=half,
        low=np.clip(centre - half, 0.0, 1.0), high=np.clip(centre + half, 0.0, 1.0),
    )  # fmt: skip


def take(state: DesignState, rows: np.ndarray) -> DesignState:
    """The state of the replicates `rows` only (a simulation drops the replicates that stopped)."""
    return DesignState(
        ability=state.ability[rows], calibration=state.calibration[rows], order=state.order[rows], probability=state.probability[rows],
        prediction=state.prediction[rows], rest=state.rest[rows],
        model_variance=state.model_variance[rows], scores=state.scores[rows],
        model_third=state.model_third[rows],
        batches=list(state.batches), residual_sq=state.residual_sq[rows],
        predicted_sq=state.predicted_sq[rows],
    )  # fmt: skip
