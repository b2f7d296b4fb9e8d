"""`medlens ratings errors`: a sheet of wrong answers for people to attribute to error categories.

Med-CMR attributes wrong answers to five categories (recognition, reasoning, knowledge,
misunderstanding, format); the categories are the user's, these are the default. The sample is
stratified over one axis (proportional allocation, largest remainders, at least the seed decides).
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.notation import distinct_list
from medlens.ratings.export import _save, instructions
from medlens.ratings.protocols import Axis, Option, RatingProtocol
from medlens.ratings.sheets import RATER_COLUMNS, Sheet, check_output
from medlens.ratings.study import (
    Study,
    answered_items,
    check_sample,
    gold_text,
    image_names,
    question_text,
    study_id,
)
from medlens.runs.view import RunView

DEFAULT_CATEGORIES = ("recognition", "reasoning", "knowledge", "misunderstanding", "format")
DEFINITIONS = {
    "recognition": "misread or missed what the image shows (perception)",
    "reasoning": "saw the right findings but drew the wrong conclusion from them",
    "knowledge": "wrong or missing medical knowledge",
    "misunderstanding": "answered a different question than the one asked",
    "format": "right content, but the answer's form broke the protocol (no option letter, …)",
}


def parse_categories(text: str) -> tuple[str, ...]:
    return tuple(distinct_list(text, "--categories", "category"))


def errors_protocol(categories: Sequence[str]) -> RatingProtocol:
    listed = "; ".join(f"{c}: {DEFINITIONS.get(c, c)}" for c in categories)
    axis = Axis("category", f"Main cause of the error ({listed})",
                tuple(Option(c, float(i)) for i, c in enumerate(categories)), level="nominal")  # fmt: skip
    return RatingProtocol(
        "errors", "Error attribution",
        "Each answer below is wrong. Pick the one category that best explains why.", (axis,),
    )  # fmt: skip


def stratified_sample(items: Sequence[Item], axis: str | None, sample: int, seed: int) -> list[str]:
    """Proportional allocation over the axis values (largest remainder), seeded within strata."""
    rng = random.Random(seed)
    strata: dict[str, list[str]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.id):
        strata[item.meta.get(axis, "") if axis else ""].append(item.id)
    total, wanted = len(items), min(sample, len(items))
    quotas = {k: wanted * len(v) / total for k, v in strata.items()}
    counts = {k: int(q) for k, q in quotas.items()}
    by_remainder = sorted(strata, key=lambda k: (-(quotas[k] - counts[k]), k))
    for k in by_remainder[: wanted - sum(counts.values())]:
        counts[k] += 1
    chosen = [i for k in sorted(strata) for i in rng.sample(strata[k], counts[k])]
    rng.shuffle(chosen)
    return chosen


def _wrong(score: object) -> bool:
    return isinstance(score, (int, float)) and not isinstance(score, bool) and score < 1


def export_errors(
    run_dir: Path, output: Path, sample: int, seed: int, categories: Sequence[str],
    stratify: str | None, scores: Mapping[str, float | None] | None = None, source: str = "rules",
) -> tuple[Study, list[Path]]:  # fmt: skip
    """A sheet of a sample of wrong answers; `scores` (item id → score, None: unscored) are the
    score source's in use (``--score judge:/combined:``), else the records' rule scores."""
    check_sample(sample)
    suffix = check_output(output)
    store = RunView(run_dir)
    items, records = answered_items(store)
    if stratify and not any(stratify in i.meta for i in items):
        axes = sorted({a for i in items for a in i.meta})
        raise MedlensError(
            f"--stratify {stratify}: no such axis in {run_dir} (axes: {', '.join(axes)})"
        )
    score_of = scores if scores is not None else {i.id: records[i.id].get("score") for i in items}
    wrong = [i for i in items if _wrong(score_of.get(i.id))]
    if not wrong:
        raise MedlensError(f"{run_dir}: no wrong answers to attribute")
    protocol = errors_protocol(categories)
    chosen = stratified_sample(wrong, stratify, sample, seed)
    what: dict[str, object] = {"categories": list(categories), "stratify": stratify}
    if source != "rules":  # another source picks other answers: another study
        what["score_source"] = source
    study = Study(study_id(store, "errors", what, seed, sample), "errors", "errors", protocol,
                  chosen, seed, {**what, "sample": sample})  # fmt: skip
    by_id = {i.id: i for i in wrong}
    rows = [
        (study.id, i, question_text(by_id[i]), gold_text(by_id[i]), records[i].get("output"),
         (records[i].get("extraction") or {}).get("answer"), image_names(by_id[i]),
         *([None] * (1 + len(RATER_COLUMNS))))
        for i in chosen
    ]  # fmt: skip
    sheet = Sheet(
        header=["study", "id", "question", "reference", "answer", "extracted", "images",
                "category", *RATER_COLUMNS],
        rows=rows,
        instructions=instructions(protocol, study.id, "Every answer in this sheet was scored wrong.",
                                  [(c, "category", DEFINITIONS.get(c, c), "") for c in categories]),
        choices={"category": list(categories)},
    )  # fmt: skip
    return study, _save(run_dir, output, suffix, sheet, study)
