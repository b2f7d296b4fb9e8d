"""``medlens estimate``: the full-benchmark score of a run made on a subset drawn by
``medlens items sample``, from its design (recorded in its run.json) and an item bank.

The run's ability is fitted on its sampled items against the bank (weak prior, so a model
stronger than every calibration run is not pulled back); the bank predicts every population item
at that ability; :func:`medlens.items.aipw.design_estimate` corrects the predictions with the
sampled residuals, over the units the design drew (its ``unit``: ``item``, or ``image`` — also
a design recorded before the unit could be chosen). ``extrapolating`` is true when the ability lies outside the calibration runs'
range or the residual check fails (the λ = 1 residual mean differs from 0 at the 1% level); the
estimate stays design-unbiased and its interval design-based then, the item model just helps less.
"Outside the range" is judged on the score, not the ability: the design-based estimate's
one-sided 90% bound beyond the score the bank predicts for its strongest (or weakest)
calibration run. The ability fitted on 50–100 items, compared with the range as a point, told a
model truly stronger than every calibration run in only 51–69% of runs (issue 45); the score
bound tells it in ≥ 90%, and fires for a run well inside the range rarely (near the edge,
within about two standard errors of it, it may fire: the data cannot tell it from outside).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import MedlensError
from medlens.items import aipw, irt
from medlens.items.bank import Bank, read_bank
from medlens.items.responses import run_spec
from medlens.runs.layout import RUN_FILE
from medlens.runs.recorded import stored_spec
from medlens.runs.view import RunView
from medlens.sources.sidecar import SIDECAR, layout_hash
from medlens.stats.intervals import wilson

METHOD = "aipw"
RESIDUAL_Z = 2.576
OUTSIDE_Z = 1.2816
"""A run is extrapolating when its score's one-sided 90% bound lies beyond the score the bank
predicts for its strongest (weakest) calibration run: a model truly beyond is told ≥ 90% of the
time, whatever the item model makes of it."""


@dataclass(frozen=True)
class Estimate:
    """One estimated score; :meth:`to_json` is the command's JSON (issue 31's keys)."""

    estimate: float
    ci: tuple[float, float]
    n: int
    population_n: int
    wilson_ci: tuple[float, float]
    subset_score: float
    extrapolating: bool
    reasons: list[str]
    ability: float
    ability_se: float
    tuning: float
    n_units: int
    by: dict[str, dict[str, Any]] = field(default_factory=dict)
    unit: str = "image"
    """The design's sampling unit: ``item`` or ``image`` (a design recorded before units could
    be chosen drew images)."""
    zero_variance: bool = False
    """The design's variance estimate is 0 (e.g. every sampled item right): the interval is
    Wilson's on the drawn units (``aipw``), not the t interval."""

    def method_text(self) -> str:
        """How the estimate was made, in a few words (text outputs)."""
        drawn = "sampled items" if self.unit == "item" else "sampled units (images)"
        if self.zero_variance:
            return (f"AIPW, λ={self.tuning:.2f}, {self.n_units} {drawn}; every drawn unit of "
                    "each stratum scored alike, so the interval is Wilson's on them")  # fmt: skip
        return (f"AIPW, λ={self.tuning:.2f}, {self.n_units} {drawn}, "
                "finite-population corrected")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "estimate": round(self.estimate, 6),
            "ci": [round(self.ci[0], 6), round(self.ci[1], 6)],
            "n": self.n,
            "population_n": self.population_n,
            "method": METHOD,
            "wilson_ci": [round(self.wilson_ci[0], 6), round(self.wilson_ci[1], 6)],
            "extrapolating": self.extrapolating,
            "reasons": self.reasons,
            "subset_score": round(self.subset_score, 6),
            "ability": round(self.ability, 4),
            "ability_se": round(self.ability_se, 4),
            "lambda": round(self.tuning, 4),
            "n_units": self.n_units,
            "unit": self.unit,
        }
        if self.by:
            out["by"] = self.by
        return out


@dataclass(frozen=True)
class RunDesign:
    """A run's design (from its run.json) and its scores on the sampled items."""

    path: Path
    design: dict[str, Any]
    scores: dict[str, float]
    subset_file: str = ""
    """The benchmark spec the run read (its ``subset.json`` holds the population layout)."""


def read_run_design(path: Path, bank: Bank) -> RunDesign:
    """The run's recorded design, checked against the bank; refused naming the run."""
    spec = run_spec(path)
    recorded = spec.get("subset") or {}
    layout = recorded.get("design")
    if not isinstance(layout, dict):
        raise MedlensError(
            f"{path}: not a run on a subset drawn by `medlens items sample` (its {RUN_FILE} "
            "records no design)"
        )
    source = (recorded.get("source") or {}).get("content_hash")
    if source != bank.benchmark.get("content_hash"):
        from medlens.core.fingerprint import older_hash_note

        raise MedlensError(
            f"{path}: its subset was drawn from content {str(source)[:12]}, but {bank.path} is a "
            f"bank of {bank.benchmark.get('spec')} (content {str(bank.benchmark.get('content_hash'))[:12]})"
            f"{older_hash_note(recorded.get('source') or {}, bank.benchmark)}"
        )
    records = RunView(path).records()
    scores = {
        i: float(r["score"])
        for i, r in records.items()
        if r.get("error") is None and r.get("score") is not None
    }
    if sum(s["population_items"] for s in layout["strata"].values()) != len(bank.ids):
        raise MedlensError(
            f"{path}: its design covers {sum(s['population_items'] for s in layout['strata'].values())} "
            f"items, but {bank.path} holds {len(bank.ids)}: not a bank of the design's population"
        )
    sampled = [i for s in layout["strata"].values() for u in s["sampled"] for i in s["units"][u]]
    missing = [i for i in sampled if i not in scores]
    if missing:
        raise MedlensError(
            f"{path}: {len(missing)} of {len(sampled)} sampled items have no score (first: "
            f"{missing[0]!r}); finish the run (running it again resumes) before estimating"
        )
    return RunDesign(path, layout, scores, str((spec.get("benchmark") or {}).get("spec") or ""))


def estimate_run(path: Path, bank_path: Path, by: str | None = None) -> Estimate:
    """The estimate of the run at `path` (the ``medlens estimate`` command)."""
    bank = read_bank(bank_path)
    run = read_run_design(path, bank)
    if by is not None and by not in run.design.get("stratify", []):
        axes = ", ".join(run.design.get("stratify", [])) or "no axes"
        raise MedlensError(
            f"--by {by}: the design of {path} was stratified by {axes}; an estimate by an axis "
            "needs the axis among the design's strata (items sample --stratify)"
        )
    return _estimate(bank, run, by)


def _estimate(bank: Bank, run: RunDesign, by: str | None) -> Estimate:
    column = {item_id: j for j, item_id in enumerate(bank.ids)}
    strata: Mapping[str, Any] = run.design["strata"]
    sampled = [i for s in strata.values() for u in s["sampled"] for i in s["units"][u]]
    rows = np.array([column[i] for i in sampled])
    y = np.array([run.scores[i] for i in sampled])
    theta, se = irt.ability(y, bank.discrimination[rows], bank.difficulty[rows], bank.guess[rows])
    predicted = dict(zip(bank.ids, bank.predict(theta).tolist(), strict=True))
    population = (float(sum(predicted.values())), len(predicted))  # the bank's ids: checked
    whole = _domain(strata, predicted, run.scores, None, population)
    reasons = _extrapolation(bank, whole, strata, predicted, run.scores)
    lo, hi = wilson(np.array([y.sum()]), np.array([len(y)]))
    by_values = {} if by is None else _by_axis(run, predicted, run.design["stratify"].index(by))
    return Estimate(
        estimate=whole.estimate, ci=whole.interval(), n=len(sampled),
        population_n=sum(s["population_items"] for s in strata.values()),
        wilson_ci=(float(lo[0]), float(hi[0])), subset_score=float(y.mean()),
        extrapolating=bool(reasons), reasons=reasons, ability=theta, ability_se=se,
        tuning=whole.tuning, n_units=sum(len(s["sampled"]) for s in strata.values()), by=by_values,
        unit=design_unit(run.design), zero_variance=bool(whole.degenerate_units),
    )  # fmt: skip


def design_unit(layout: Mapping[str, Any]) -> str:
    """The sampling unit a design records; a design recorded without one drew images."""
    return str(layout.get("unit") or "image")


def _samples(
    strata: Mapping[str, Any], predicted: Mapping[str, float], scores: Mapping[str, float]
) -> list[aipw.StratumSample]:
    """Per stratum its drawn units' observed and predicted totals (the drawn units' items are
    in a compact design too)."""
    out = []
    for stratum in strata.values():
        units = stratum["units"]
        drawn = stratum["sampled"]
        out.append(aipw.StratumSample(
            population_units=stratum["population_units"],
            observed=np.array([sum(scores[i] for i in units[u]) for u in drawn]),
            predicted=np.array([sum(predicted[i] for i in units[u]) for u in drawn]),
            items=sum(len(units[u]) for u in drawn),
        ))  # fmt: skip
    return out


def _population(strata: Mapping[str, Any], predicted: Mapping[str, float]) -> tuple[float, int]:
    """The predicted total and item count of the strata's population (a full layout)."""
    items = [i for stratum in strata.values() for ids in stratum["units"].values() for i in ids]
    return float(sum(predicted[i] for i in items)), len(items)


def _domain(
    strata: Mapping[str, Any],
    predicted: Mapping[str, float],
    scores: Mapping[str, float],
    tuning: float | None,
    population: tuple[float, int],
) -> aipw.DesignEstimate:
    total, size = population
    return aipw.design_estimate(size, total, _samples(strata, predicted, scores), tuning)


def _extrapolation(
    bank: Bank,
    whole: aipw.DesignEstimate,
    strata: Mapping[str, Any],
    predicted: Mapping[str, float],
    scores: Mapping[str, float],
) -> list[str]:
    """Why the item model may not describe this run (empty: it interpolates): its score may lie
    outside the calibration runs' range, or the residual check fails (module docstring)."""
    reasons = []
    low, high = bank.ability_range
    floor, ceiling = float(bank.predict(low).mean()), float(bank.predict(high).mean())
    margin = OUTSIDE_Z * whole.se
    if whole.estimate + margin > ceiling or whole.estimate - margin < floor:
        side = "above" if whole.estimate + margin > ceiling else "below"
        edge = ceiling if side == "above" else floor
        reasons.append(
            f"score {whole.estimate:.3f} (± {whole.se:.3f}) may lie {side} the calibration runs' "
            f"range: the bank predicts {edge:.3f} for its {'strongest' if side == 'above' else 'weakest'} run"
        )
    population = (float(sum(predicted.values())), len(predicted))
    plain = _domain(strata, predicted, scores, 1.0, population)
    prediction_only = population[0] / population[1]
    residual = plain.estimate - prediction_only
    if plain.se > 0 and abs(residual) > RESIDUAL_Z * plain.se:
        reasons.append(
            f"residual check failed: the sampled items' residual mean is {residual:+.3f} "
            f"({abs(residual) / plain.se:.1f} standard errors from 0)"
        )
    return reasons


def population_layout(run: RunDesign) -> Mapping[str, Any]:
    """Every stratum's units with their items: the run's design when it is whole, else the
    layout in ``subset.json`` beside the subset file it ran on, checked against its hash."""
    strata: Mapping[str, Any] = run.design["strata"]
    if "layout" not in run.design:
        return strata
    sidecar = Path(stored_spec(run.subset_file).argument).expanduser().parent / SIDECAR
    try:
        full = json.loads(sidecar.read_text(encoding="utf-8"))["design"]["strata"]
    except (OSError, ValueError, KeyError, TypeError):
        full = None
    if full is None or layout_hash(full) != run.design["layout"].get("sha256"):
        raise MedlensError(
            f"{run.path}: an estimate by axis needs the design's population layout, kept in "
            f"{sidecar} (the subset.json written with the subset); it is missing or another "
            "design's"
        )
    return full


def _by_axis(
    run: RunDesign, predicted: Mapping[str, float], position: int
) -> dict[str, dict[str, Any]]:
    """Estimates per value of a stratification axis (its strata form the domain)."""
    full = population_layout(run)
    groups: dict[str, list[str]] = {}
    for key in full:
        groups.setdefault(key.rsplit("#", 1)[0].split("|")[position], []).append(key)
    out = {}
    for value, keys in sorted(groups.items()):
        members = {key: run.design["strata"][key] for key in keys}
        population = _population({key: full[key] for key in keys}, predicted)
        found = _domain(members, predicted, run.scores, None, population)
        lo, hi = found.interval()
        out[value] = {
            "estimate": round(found.estimate, 6),
            "ci": [round(lo, 6), round(hi, 6)],
            "n": sum(len(s["units"][u]) for s in members.values() for u in s["sampled"]),
            "population_n": population[1],
        }
    return out


def recorded_estimate(path: Path, spec: Mapping[str, Any]) -> Estimate | str | None:
    """For report and board: the estimate of a run on a designed subset, from the bank its
    design names (None: no design; a string: why there is no estimate)."""
    layout = (spec.get("subset") or {}).get("design")
    if not isinstance(layout, dict):
        return None
    bank_path = Path(str((layout.get("bank") or {}).get("path", "")))
    if not bank_path.is_file():
        return f"bank {bank_path} not found (medlens items estimate {path} --bank BANK.json)"
    try:
        bank = read_bank(bank_path)
        return _estimate(bank, read_run_design(path, bank), None)
    except MedlensError as exc:
        return str(exc)
