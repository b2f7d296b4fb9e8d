"""The predictor of an adaptive run (numbers only): what it expects this run to score on every
item, refitted on the answers before each batch (:mod:`medlens.items.adaptive_design`).

Two stages. With a bank: the bank's item response curve P = c + (1 − c) σ(a (θ + δ_g − b)) at
the run's ability θ with a ridge-shrunk offset δ_g per group of items. With a baseline run (or
without a bank): a logistic model σ(β₀ + β₁·logit P_bank + γ·(2·baseline − 1) [+ group
offsets without a bank]), with no guessing floor, since a checkpoint repeats its predecessor's
wrong answers far more often than chance. Each is fitted by a few penalised Fisher-scoring steps
per batch, warm-started from the last batch's fit, vectorised over replicates.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

OFFSET_SD = 0.5
"""Prior s.d. of a group's ability offset (logits)."""
COEFFICIENT_SD = 3.0
"""Prior s.d. of the ability (around its start) and of the baseline term."""
NEWTON_STEPS = 3
"""Fisher-scoring steps per batch, warm-started from the last batch's fit."""


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


def predictions(model: ItemModel, ability: np.ndarray, calibration: np.ndarray) -> np.ndarray:
    """(R, N): the predicted score of every item."""
    replicates = ability.shape[0]
    if not model.calibrated:
        return _bank_probability(model, ability, None)
    x = _calibration_features(model, ability, None, replicates)
    return np.asarray(expit(np.einsum("rnk,rk->rn", x, calibration)))


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


def start_params(model: ItemModel, replicates: int) -> tuple[np.ndarray, np.ndarray]:
    """The parameters before any answer: the bank's median ability, the calibration prior."""
    ability = np.zeros((replicates, model.n_ability))
    if model.has_bank:
        ability[:, 0] = model.start
    return ability, np.tile(_calibration_prior(model)[0], (replicates, 1))


def fit(
    model: ItemModel,
    ability: np.ndarray,
    calibration: np.ndarray,
    items: np.ndarray,
    y: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The parameters after a few Fisher-scoring steps on the answered items ((R, T) indices
    and scores; penalised maximum likelihood, warm-started from `ability`, `calibration`)."""
    if items.shape[1] == 0:
        return ability, calibration
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
