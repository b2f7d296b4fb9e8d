"""`medlens agreement RUN --judge NAME --human FILE`: how well a judge agrees with people.

The human file is any CSV/xlsx with ``id``, ``rater`` (optional: one rater) and one column per
judged dimension (``equivalent`` for an equivalence judge) — a filled ``ratings export`` sheet
works as is. Each (item, rater) rating is paired with the judge's value for that item; bootstrap
intervals resample items, so several raters of one item move together.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError
from medlens.judges.verdicts import judged_item_scores, judged_values, weighted_scores
from medlens.ratings.calibrated import calibrated_for_run, human_labels
from medlens.ratings.protocols import EQUIVALENCE
from medlens.ratings.sheets import FilledSheet, read_sheet
from medlens.ratings.winratio import win_ratios
from medlens.runs.view import RunView
from medlens.stats.agreement import PairedRatings, paired_summary, rater_agreement

RUBRIC_TOP = 10.0


@dataclass(frozen=True)
class HumanRating:
    run: int
    """Index of the run (``RUN`` arguments, in order)."""
    item: str
    rater: str
    values: Mapping[str, float]


def read_human(
    files: Sequence[Path], runs: Sequence[Path], dimensions: Sequence[str]
) -> list[HumanRating]:
    """Every rated row of the human files, checked against the runs' items; nothing half-read.
    One rating per (run, item, rater): the last row wins."""
    items = [{i.id for i in RunView(run).items()} for run in runs]
    out: dict[tuple[int, str, str], HumanRating] = {}
    for position, file in enumerate(files):
        sheet = read_sheet(file)
        present = _check_header(sheet, dimensions)
        for row, cells in sheet.rows:
            run = _row_run(sheet, row, cells, runs, position, len(files))
            if cells.get("id", "") not in items[run]:
                problem = f"id {cells.get('id')!r} is not an item of run {runs[run]}"
                raise InputError(file, f"row {row}, column 'id'", problem)
            values = {
                d: v for d in present if (v := _value(sheet, row, d, cells.get(d, ""))) is not None
            }
            if values:
                rater = cells.get("rater") or cells.get("rater_id") or "rater"
                # a rater's later row for the same item replaces the earlier one
                out[(run, cells["id"], rater)] = HumanRating(run, cells["id"], rater, values)
    return list(out.values())


def _check_header(sheet: FilledSheet, dimensions: Sequence[str]) -> list[str]:
    if "id" not in sheet.header:
        raise InputError(sheet.path, "row 1, column 'id'", "no 'id' column")
    present = [d for d in dimensions if d in sheet.header]
    if not present:
        problem = f"no dimension column (the judge rates: {', '.join(dimensions)})"
        raise InputError(sheet.path, "row 1", problem)
    return present


def _row_run(
    sheet: FilledSheet, row: int, cells: Mapping[str, str], runs: Sequence[Path], position: int,
    n_files: int,
) -> int:  # fmt: skip
    """Which run a row rates: its study (an exported sheet), its ``run`` column, or its file."""
    from medlens.runs.ratings import has_study

    study = cells.get("study", "")
    if study:
        for index, run in enumerate(runs):
            if has_study(run, study):
                return index
    name = cells.get("run", "")
    if name:
        for index, run in enumerate(runs):
            if name in {run.name, str(run)}:
                return index
        raise InputError(
            sheet.path, f"row {row}, column 'run'", f"{name!r} is none of the runs given"
        )
    if len(runs) == 1:
        return 0
    if n_files == len(runs):
        return position
    problem = "cannot tell which run this row rates (give a 'run' column, or one --human per run)"
    raise InputError(sheet.path, f"row {row}", problem)


def _value(sheet: FilledSheet, row: int, dimension: str, cell: str) -> float | None:
    if not cell:
        return None
    where = f"row {row}, column {dimension!r}"
    if dimension == "equivalent":
        value = EQUIVALENCE.axes[0].parse(cell)
        if value is None:
            raise InputError(sheet.path, where, f"{cell!r} is not yes/no")
        return value
    try:
        number = float(cell)
    except ValueError:
        raise InputError(sheet.path, where, f"{cell!r} is not a number") from None
    if number != number or not 0 <= number <= RUBRIC_TOP:
        raise InputError(sheet.path, where, f"{cell} is outside the scale 0–{RUBRIC_TOP:g}")
    return number


def judge_human_agreement(
    runs: Sequence[Path], judge: str, files: Sequence[Path], n_resamples: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """``{"dimensions": {NAME: {"n", "spearman", "spearman_ci", "kappa", "mad", …}}, "raters",
    "win_ratios"}``; see module docstring."""
    judged = [judged_values(run, judge) for run in runs]
    dimensions = judged[0][1]
    if any(j[1] != dimensions for j in judged):
        raise MedlensError(f"judge {judge!r} rates different dimensions in the runs given")
    ratings = read_human(files, runs, dimensions)
    out: dict[str, Any] = {"judge": judge, "runs": [str(r) for r in runs], "dimensions": {}}
    nominal = dimensions == ["equivalent"]
    for dimension in dimensions:
        pairs: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for r in ratings:
            judge_value = judged[r.run][0][dimension].get(r.item)
            if dimension in r.values and judge_value is not None:
                pairs[f"{r.run}/{r.item}"].append((r.values[dimension], judge_value))
        labels = [0.0, 1.0] if nominal else [float(v) for v in range(int(RUBRIC_TOP) + 1)]
        paired = PairedRatings(pairs, labels, None if nominal else "quadratic")
        out["dimensions"][dimension] = paired_summary(paired, n_resamples, seed)
    out["raters"] = _inter_rater(ratings, dimensions, nominal)
    out["win_ratios"] = _win_ratios(runs, judge, ratings, judged[0][2]["meta"], nominal)
    out["calibrated_runs"] = _calibrations(runs, judge, ratings, judged[0][2]["meta"], nominal)
    out["calibrated"] = out["calibrated_runs"][0]["calibrated"]
    return out


def _calibrations(
    runs: Sequence[Path], judge: str, ratings: Sequence[HumanRating], meta: Mapping[str, Any],
    nominal: bool,
) -> list[dict[str, Any]]:  # fmt: skip
    """Per run: the judged mean calibrated on the human labels (PPI), and the digest of the
    judged scores used; a run the labels do not cover gets None, no run covered is an error."""
    found: list[dict[str, Any]] = []
    problems: list[MedlensError] = []
    for index, run in enumerate(runs):
        try:
            calibrated, digest = calibrated_for_run(
                run, judge, human_labels(ratings, index, meta, nominal)
            )
        except MedlensError as exc:
            problems.append(exc)
            calibrated, digest = None, None
        found.append({"run": str(run), "calibrated": calibrated, "digest": digest})
    if len(problems) == len(runs):
        raise problems[0]
    return found


def _inter_rater(
    ratings: Sequence[HumanRating], dimensions: Sequence[str], nominal: bool
) -> dict[str, Any] | None:
    if len({r.rater for r in ratings}) < 2:
        return None
    out = {}
    for dimension in dimensions:
        per_rater: dict[str, dict[str, float]] = defaultdict(dict)
        for r in ratings:
            if dimension in r.values:
                per_rater[r.rater][f"{r.run}/{r.item}"] = r.values[dimension]
        labels = [0.0, 1.0] if nominal else [float(v) for v in range(int(RUBRIC_TOP) + 1)]
        out[dimension] = rater_agreement(
            per_rater,
            "nominal" if nominal else "interval",
            None if nominal else "quadratic",
            labels,
        )
    return out


def _win_ratios(
    runs: Sequence[Path], judge: str, ratings: Sequence[HumanRating], meta: Mapping[str, Any],
    nominal: bool,
) -> dict[str, Any] | None:  # fmt: skip
    """Model-level win ratios by people and by the judge (two or more runs; see winratio.py)."""
    if len(runs) < 2:
        return None
    weights = (
        {d: 1.0 for d in ["equivalent"]}
        if nominal
        else {d: float(w) for d, w in (meta["protocol"].get("weights") or {}).items()}
    )
    human_scores, human_values = [], []
    for index in range(len(runs)):
        mean: dict[str, dict[str, float]] = defaultdict(dict)
        sums: dict[tuple[str, str], list[float]] = defaultdict(list)
        for r in ratings:
            if r.run == index:
                for d, v in r.values.items():
                    sums[(d, r.item)].append(v)
        for (d, item), seen in sums.items():
            mean[d][item] = sum(seen) / len(seen)
        dims = weights or {d: 1.0 for d in mean}
        human_scores.append(weighted_scores(mean, dims, 1.0 if nominal else RUBRIC_TOP))
        human_values.append(mean)
    judge_scores = [judged_item_scores(run, judge) for run in runs]
    names = [str(r) for r in runs]
    out = win_ratios(names, human_scores, judge_scores)
    out.update(
        dimension_win_ratios(names, human_values, [judged_values(run, judge)[0] for run in runs])
    )
    return out


WIN_RATIO_CRITERION = 0.0449
"""Med-CMR's acceptance criterion: the largest per-dimension |people − judge| win-ratio gap."""


def dimension_win_ratios(
    names: Sequence[str],
    human: Sequence[Mapping[str, Mapping[str, float]]],
    judge: Sequence[Mapping[str, Mapping[str, float]]],
) -> dict[str, Any]:
    """Med-CMR's judge validation: the win ratios per rubric dimension (people vs the judge on
    the items rated in every run), and the largest per-dimension difference against 0.0449."""
    dimensions = sorted(set.intersection(*(set(h) for h in human)) & set(judge[0]))
    per_dimension = {
        d: win_ratios(names, [h[d] for h in human], [j.get(d, {}) for j in judge])
        for d in dimensions
    }
    gaps = {
        d: r["largest_difference"]
        for d, r in per_dimension.items()
        if r["largest_difference"] is not None
    }
    largest = max(gaps, key=lambda d: gaps[d]) if gaps else None
    return {
        "dimensions": per_dimension,
        "largest_dimension_difference": None if largest is None else {
            "dimension": largest, "value": gaps[largest], "criterion": WIN_RATIO_CRITERION,
            "within": gaps[largest] <= WIN_RATIO_CRITERION},
    }  # fmt: skip
