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
from scipy.special import expit, stdtrit

FLOOR_SHARE = 0.2
"""η: the share of every draw spread uniformly over the items left."""
OFFSET_SD = 0.5
"""Prior s.d. of a group's ability offset (logits)."""
COEFFICIENT_SD = 3.0
"""Prior s.d. of the ability (around its start) and of the baseline term."""
NEWTON_STEPS = 3
"""Fisher-scoring steps per batch, warm-started from the last batch's fit."""
MIN_VARIANCE = 1e-4
"""Floor of v_j, so an item predicted with certainty keeps a share of the design's attention."""
CHECK_PRIOR = 1.0
"""Pseudo-items in each check cell's observed/predicted residual ratio (1 before any answer)."""


@dataclass(frozen=True)
class ItemModel:
    """The fixed part of a predictor: bank parameters, item groups and the baseline's scores."""

    discrimination: np.ndarray | None
    """(N,) a_j of the bank; None without a bank."""
    difficulty: np.ndarray | None
    """(N,) b_j of the bank."""
    guess: np.ndarray | None
    """(N,) c_j, the item's chance level."""
    group: np.ndarray
    """(N,) int: each item's group (ability offsets), 0 … n_groups − 1."""
    n_groups: int
    cell: np.ndarray
    """(N,) int: each item's check cell (residual ratio), 0 … n_cells − 1."""
    n_cells: int
    baseline: np.ndarray | None = None
    """(R, N) or (1, N): the baseline run's score on every item, or None."""
    start: float = 0.0
    """The ability the fit starts from and shrinks towards (the calibration runs' median)."""

    @property
    def n_items(self) -> int:
        return len(self.group)

    @property
    def has_bank(self) -> bool:
        return self.discrimination is not None

    @property
    def n_ability(self) -> int:
        """Ability and its group offsets (bank only)."""
        return 1 + self.n_groups if self.has_bank else 0

    @property
    def calibrated(self) -> bool:
        """Whether the second stage (a logistic model over the bank and the baseline) is fitted."""
        return self.baseline is not None

    @property
    def n_calibration(self) -> int:
        """Intercept, bank logit, baseline term; group offsets when there is no bank."""
        if not self.calibrated:
            return 0
        return (
            1
            + self.has_bank
            + (self.baseline is not None)
            + (0 if self.has_bank else self.n_groups)
        )


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
    ability = np.zeros((replicates, model.n_ability))
    if model.has_bank:
        ability[:, 0] = model.start
    calibration = np.tile(_calibration_prior(model)[0], (replicates, 1))
    empty = np.zeros((replicates, 0))
    return DesignState(
        ability=ability, calibration=calibration, order=np.zeros((replicates, 0), dtype=np.int64),
        probability=empty, prediction=empty, rest=empty, model_variance=empty, scores=empty,
        model_third=empty, residual_sq=np.zeros((replicates, model.n_cells)),
        predicted_sq=np.zeros((replicates, model.n_cells)),
    )  # fmt: skip


def _at(values: np.ndarray, items: np.ndarray | None) -> np.ndarray:
    """A per-item array at `items` ((R, T) indices), or as a row (1, N) when `items` is None."""
    return values[None] if items is None else values[items]


def _ability_features(model: ItemModel, items: np.ndarray) -> np.ndarray:
    """(R, T, 1 + G): dz/d(ability, offsets) of the bank's logit at `items`."""
    assert model.discrimination is not None
    a = model.discrimination[items]
    group = model.group[items]
    return np.stack([a, *(a * (group == k) for k in range(model.n_groups))], axis=2)


def _bank_linear(model: ItemModel, ability: np.ndarray, items: np.ndarray | None) -> np.ndarray:
    """a (θ + δ_g − b) at `items` (None: every item, (R, N))."""
    assert model.discrimination is not None and model.difficulty is not None
    a, b, group = (_at(v, items) for v in (model.discrimination, model.difficulty, model.group))
    offsets = ability[:, 1:]
    shift = offsets[:, group[0]] if items is None else np.take_along_axis(offsets, group, axis=1)
    return np.asarray(a * (ability[:, :1] + shift - b))


def _bank_probability(
    model: ItemModel, ability: np.ndarray, items: np.ndarray | None
) -> np.ndarray:
    assert model.guess is not None
    c = _at(model.guess, items)
    return np.asarray(c + (1 - c) * expit(_bank_linear(model, ability, items)))


def _calibration_features(
    model: ItemModel, ability: np.ndarray, items: np.ndarray | None, replicates: int
) -> np.ndarray:
    """(R, T or N, K): intercept, the bank's logit, 2·baseline − 1, group indicators (no bank)."""
    shape = (replicates, model.n_items if items is None else items.shape[1])
    columns = [np.ones(shape)]
    if model.has_bank:
        p = np.clip(_bank_probability(model, ability, items), 1e-6, 1 - 1e-6)
        columns.append(np.broadcast_to(np.log(p / (1 - p)), shape))
    if model.baseline is not None:
        base = np.broadcast_to(model.baseline, (replicates, model.n_items))
        chosen = base if items is None else np.take_along_axis(base, items, axis=1)
        columns.append(2.0 * chosen - 1.0)
    if not model.has_bank:
        group = np.broadcast_to(_at(model.group, items), shape)
        columns += [(group == k).astype(float) for k in range(model.n_groups)]
    return np.stack(columns, axis=2)


def _calibration_prior(model: ItemModel) -> tuple[np.ndarray, np.ndarray]:
    """Prior means and precisions of the second stage: the bank's logit taken as it is (1),
    nothing else known (0); group offsets shrunk as the bank's are."""
    mean = np.zeros(model.n_calibration)
    sd = np.full(model.n_calibration, COEFFICIENT_SD)
    if model.has_bank and model.calibrated:
        mean[1], sd[1] = 1.0, 1.0
    if not model.has_bank:
        sd[len(sd) - model.n_groups :] = OFFSET_SD
    return mean, 1.0 / sd**2


def predictions(model: ItemModel, state: DesignState) -> np.ndarray:
    """(R, N): the predicted score of every item."""
    replicates = state.ability.shape[0]
    if not model.calibrated:
        return _bank_probability(model, state.ability, None)
    x = _calibration_features(model, state.ability, None, replicates)
    return np.asarray(expit(np.einsum("rnk,rk->rn", x, state.calibration)))


def _scoring_steps(
    params: np.ndarray,
    features: np.ndarray,
    y: np.ndarray,
    floor: np.ndarray,
    prior: tuple[np.ndarray, np.ndarray],
    offset: np.ndarray | float = 0.0,
) -> np.ndarray:
    """Penalised Fisher scoring of P = c + (1 − c) σ(offset + x·β) on (R, T) outcomes."""
    mean, precision = prior
    for _ in range(NEWTON_STEPS):
        s = expit(offset + np.einsum("rtk,rk->rt", features, params))
        p = np.clip(floor + (1 - floor) * s, 1e-9, 1 - 1e-9)
        slope = (1 - floor) * s * (1 - s)
        residual = (y - p) * slope / (p * (1 - p))
        weight = slope * slope / (p * (1 - p))
        gradient = np.einsum("rt,rtk->rk", residual, features) - (params - mean) * precision
        information = np.einsum("rt,rtk,rtl->rkl", weight, features, features)
        information = information + np.diag(precision)
        step = np.linalg.solve(information, gradient[..., None])[..., 0]
        params = params + np.clip(step, -1.0, 1.0)
    return params


def fit(model: ItemModel, state: DesignState) -> tuple[np.ndarray, np.ndarray]:
    """The predictor's parameters after a few Fisher-scoring steps on the answered draws
    (penalised maximum likelihood, warm-started from the state's)."""
    ability, calibration = state.ability, state.calibration
    if state.calls == 0:
        return ability, calibration
    items, y = state.order, state.scores
    replicates = items.shape[0]
    if model.has_bank:
        assert model.guess is not None and model.difficulty is not None
        x = _ability_features(model, items)
        mean = np.zeros(model.n_ability)
        mean[0] = model.start
        sd = np.full(model.n_ability, OFFSET_SD)
        sd[0] = COEFFICIENT_SD
        offset = -model.discrimination[items] * model.difficulty[items]  # type: ignore[index]
        ability = _scoring_steps(ability, x, y, model.guess[items], (mean, 1 / sd**2), offset)
    if model.calibrated:
        x = _calibration_features(model, ability, items, replicates)
        calibration = _scoring_steps(calibration, x, y, np.zeros(1), _calibration_prior(model))
    return ability, calibration


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
