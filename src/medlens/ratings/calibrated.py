"""Human-anchored judged scores for `medlens agreement --human`: each rated item's human label
on the judge's [0, 1] scale, the judged mean corrected with those labels by prediction-powered
inference (``judges/calibration.py``), and the agreement file written beside the judge."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from medlens.core.errors import MedlensError
from medlens.judges.calibration import calibrated_score, save_agreement, scores_digest
from medlens.judges.verdicts import judged_item_scores, read_judgements, weighted_scores
from medlens.runs.judgements import judge_dir
from medlens.runs.view import RunView

RUBRIC_TOP = 10.0


class Rating(Protocol):
    """One rater's values for one item of one run (``human.HumanRating``)."""

    @property
    def run(self) -> int: ...
    @property
    def item(self) -> str: ...
    @property
    def values(self) -> Mapping[str, float]: ...


def human_labels(
    ratings: Sequence[Rating], run: int, meta: Mapping[str, Any], nominal: bool
) -> dict[str, float]:
    """Item → the mean over its raters of their label on the judge's scale: equivalence 1/0,
    rubric Σ wᵢsᵢ / (10·Σ wᵢ) over the judge's weighted dimensions (a rater who left one of
    them empty gives no label)."""
    weights = (
        {"equivalent": 1.0}
        if nominal
        else {d: float(w) for d, w in (meta["protocol"].get("weights") or {}).items()}
    )
    per_item: dict[str, list[float]] = defaultdict(list)
    for rating in ratings:
        if rating.run != run:
            continue
        values = {d: {rating.item: v} for d, v in rating.values.items()}
        scored = weighted_scores(values, weights, 1.0 if nominal else RUBRIC_TOP)
        if rating.item in scored:
            per_item[rating.item].append(scored[rating.item])
    return {item: sum(seen) / len(seen) for item, seen in per_item.items()}


def calibrated_for_run(
    run: Path, judge: str, labels: Mapping[str, float]
) -> tuple[dict[str, Any], str]:
    """(the ``calibrated`` object, the digest of the judged scores it used) for one run."""
    _, lines = read_judgements(run, judge)
    judged_ids = sorted({str(line["id"]) for line in lines})
    if not set(labels) & set(judged_ids):
        raise MedlensError(
            f"{judge_dir(run, judge)}: the human labels cover none of the {len(judged_ids)} "
            "items this judge scored (they rate other items, or leave the judge's dimensions "
            "empty)"
        )
    scores = judged_item_scores(run, judge)
    clusters = {item.id: item.meta.get("image_id", item.id) for item in RunView(run).items()}
    return calibrated_score(scores, judged_ids, labels, clusters), scores_digest(scores)


def save_calibrations(
    runs: Sequence[Path], judge: str, result: Mapping[str, Any], files: Sequence[Path]
) -> list[Path]:
    """Write each run's ``judges/<judge>/agreement.json`` (under the run's lock)."""
    from medlens.runs.lock import hold_run_lock

    written = []
    for run, found in zip(runs, result["calibrated_runs"], strict=True):
        if found["digest"] is None:
            continue  # the labels rate none of this run's judged items
        with hold_run_lock(run, "medlens agreement"):
            folder = judge_dir(run, judge)
            chosen = {**result, "calibrated": found["calibrated"]}
            written.append(save_agreement(folder, chosen, found["digest"], list(files)))
    return written
