"""The full-benchmark estimate of an adaptive run (``medlens estimate RUN``, the run's own last
lines, ``report``, ``board``, ``gate``): the recorded design replayed from the run's bank,
baseline and answers (:func:`medlens.items.adaptive.replay`), so every command gives the figures
the run printed.

``extrapolating`` is true when the run's score may lie outside the calibration runs' range (as
``estimate`` judges a run on a designed subset: the estimate's one-sided 90% bound beyond the
bank's mean prediction at the weakest or strongest calibration run), or the residual check fails (the design's estimate differs from the final predictor's
mean over every item by more than 2.576 standard errors); the estimate and its interval stay
design-based then, the predictor just helps less.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import MedlensError
from medlens.items import adaptive_design as ad
from medlens.items.adaptive import Predictor, replay
from medlens.items.adaptive_planner import answered_scores
from medlens.items.bank import Bank, read_bank
from medlens.items.baseline import Baseline, check_same_items, delta_json, read_baseline
from medlens.items.estimate import OUTSIDE_Z
from medlens.items.responses import run_spec
from medlens.runs.layout import run_file
from medlens.runs.view import RunView
from medlens.stats.intervals import wilson

METHOD = "adaptive"
RESIDUAL_Z = 2.576


@dataclass(frozen=True)
class AdaptiveEstimate:
    """One adaptive run's estimate; :meth:`to_json` is ``estimate --json``'s object."""

    estimate: float
    ci: tuple[float, float]
    n: int
    population_n: int
    half_width: float
    target_halfwidth: float
    status: str
    batches: int
    subset_score: float
    wilson_ci: tuple[float, float]
    extrapolating: bool
    reasons: list[str]
    ability: float | None
    predictor: dict[str, Any]
    unanswered: int = 0
    """Items of a recorded batch still without an answer (a killed run): not counted yet."""
    comparison: dict[str, Any] = field(default_factory=dict)
    """``baseline``, ``baseline_score``, ``delta``, ``delta_ci`` when a baseline was given."""

    def method_text(self) -> str:
        """How the estimate was made, in a few words (text outputs)."""
        used = " and ".join(
            name for name in ("bank", "baseline") if self.predictor.get(name) is not None
        )
        return (f"adaptive design, {self.n} items asked in {self.batches} batches, predicted by "
                f"the {used}; half-width {self.half_width:.3f}, target {self.target_halfwidth:g}")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimate": round(self.estimate, 6),
            "ci": [round(self.ci[0], 6), round(self.ci[1], 6)],
            "n": self.n,
            "population_n": self.population_n,
            "method": METHOD,
            "half_width": round(self.half_width, 6),
            "target_halfwidth": self.target_halfwidth,
            "status": self.status,
            "batches": self.batches,
            "wilson_ci": [round(self.wilson_ci[0], 6), round(self.wilson_ci[1], 6)],
            "subset_score": round(self.subset_score, 6),
            "extrapolating": self.extrapolating,
            "reasons": self.reasons,
            "ability": None if self.ability is None else round(self.ability, 4),
            "predictor": self.predictor,
        }
        if self.unanswered:
            out["unanswered"] = self.unanswered
        return {**out, **self.comparison}


def is_adaptive(spec: Mapping[str, Any]) -> bool:
    return isinstance(spec.get("adaptive"), dict)


def estimate_adaptive_run(
    path: Path, bank: Path | None = None, baseline: Path | None = None
) -> AdaptiveEstimate:
    """The estimate of the adaptive run at `path`; `bank` must be the design's (its recorded
    path when None); `baseline` adds the comparison with that full run."""
    spec = run_spec(path)
    if not is_adaptive(spec):
        raise MedlensError(f"{path}: not an adaptive run (its run spec records no `adaptive`)")
    design = spec["adaptive"]
    predictor = Predictor(_design_bank(path, design, bank), _design_baseline(path, design),
                          tuple(design.get("stratify") or ()))  # fmt: skip
    found = _estimate(path, spec, predictor)
    if baseline is None:
        return found
    other = read_baseline(baseline)
    content = str((spec.get("benchmark") or {}).get("content_hash") or "")
    check_same_items(other, content, [item.id for item in RunView(path).items()], str(path))
    return _with_comparison(found, other)


def _with_comparison(found: AdaptiveEstimate, other: Baseline) -> AdaptiveEstimate:
    from dataclasses import replace

    return replace(found, comparison=delta_json(found.estimate, found.ci, other))


def _design_bank(path: Path, design: dict[str, Any], given: Path | None) -> Bank | None:
    recorded = design.get("bank")
    if recorded is None:
        if given is not None:
            raise MedlensError(f"--bank {given}: {path} was designed without a bank; leave it out")
        return None
    bank = read_bank(given if given is not None else Path(recorded["path"]))
    if bank.sha256 != recorded.get("sha256"):
        raise MedlensError(
            f"{bank.path}: not the bank {path} was designed with (sha256 {bank.sha256[:12]}, the "
            f"run recorded {str(recorded.get('sha256'))[:12]} from {recorded.get('path')})"
        )
    return bank


def _design_baseline(path: Path, design: dict[str, Any]) -> Baseline | None:
    recorded = design.get("baseline")
    if recorded is None:
        return None
    where = Path(recorded["path"])
    try:
        baseline = read_baseline(where, "the design's baseline")
    except MedlensError as exc:
        raise MedlensError(
            f"{path}: its design predicts with {where}, which cannot be read: {exc}"
        ) from None
    if baseline.fingerprint != recorded.get("scores_sha256"):
        raise MedlensError(
            f"{path}: its design's baseline {where} has changed since the run (its scores' "
            "sha256 differs); the design cannot be replayed"
        )
    return baseline


def _estimate(path: Path, spec: dict[str, Any], predictor: Predictor) -> AdaptiveEstimate:
    view = RunView(path)
    items = view.items()
    model = predictor.item_model(items)
    recorded = view.run.get("adaptive") or {}
    asked = list(recorded.get("asked") or [])
    index = {item.id: j for j, item in enumerate(items)}
    scores = answered_scores(view.records())
    found = replay(model, int(spec.get("seed") or 0), asked, index, scores, str(run_file(path)))
    state = found.state
    if state.calls < 2:
        raise MedlensError(f"{path}: fewer than 2 items answered yet; run it again to go on")
    interval = ad.interval(model, state)
    estimate, low, high = (float(v[0]) for v in (interval.estimate, interval.low, interval.high))
    y = state.scores[0]
    wlo, whi = wilson(np.array([y.sum()]), np.array([len(y)]))
    reasons, ability = _extrapolation(predictor, model, state, interval)
    return AdaptiveEstimate(
        estimate=estimate, ci=(low, high), n=state.calls, population_n=model.n_items,
        half_width=float(interval.half_width[0]),
        target_halfwidth=float(recorded.get("target_halfwidth") or 0.0),
        status=str(recorded.get("status") or "running"), batches=len(state.batches),
        subset_score=float(y.mean()), wilson_ci=(float(wlo[0]), float(whi[0])),
        extrapolating=bool(reasons), reasons=reasons, ability=ability,
        predictor={"bank": spec["adaptive"].get("bank"), "baseline": spec["adaptive"].get("baseline")},
        unanswered=len(found.pending),
    )  # fmt: skip


def _extrapolation(
    predictor: Predictor, model: ad.ItemModel, state: ad.DesignState, interval: ad.Interval
) -> tuple[list[str], float | None]:
    """Why the predictor may not describe this run, and its ability on the bank."""
    from dataclasses import replace

    reasons: list[str] = []
    ability, calibration = ad.fit(model, state)
    ability_value = None
    estimate, se = float(interval.estimate[0]), float(interval.se[0])
    if predictor.bank is not None:
        ability_value = float(ability[0, 0])
        low, high = predictor.bank.ability_range
        floor = float(predictor.bank.predict(low).mean())
        ceiling = float(predictor.bank.predict(high).mean())
        margin = OUTSIDE_Z * se
        if estimate + margin > ceiling or estimate - margin < floor:
            side = "above" if estimate + margin > ceiling else "below"
            edge = ceiling if side == "above" else floor
            reasons.append(f"score {estimate:.3f} (± {se:.3f}) may lie {side} the calibration runs' "
                           f"range: the bank predicts {edge:.3f} for its "
                           f"{'strongest' if side == 'above' else 'weakest'} run")  # fmt: skip
    fitted = replace(state, ability=ability, calibration=calibration)
    predicted = float(ad.predictions(model, fitted)[0].mean())
    residual = estimate - predicted
    if se > 0 and abs(residual) > RESIDUAL_Z * se:
        reasons.append(f"residual check failed: the estimate differs from the predictor's mean by "
                       f"{residual:+.3f} ({abs(residual) / se:.1f} standard errors)")  # fmt: skip
    return reasons, ability_value
