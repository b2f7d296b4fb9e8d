"""`medlens ratings pairwise`: a blinded side-by-side sheet of two runs' answers to the same items.

Which run is "Response 1" is drawn per item from the seed; the key is stored with the study in
run A's directory (``ratings/studies/<id>.json``), never in the sheet.
"""

from __future__ import annotations

import random
from pathlib import Path

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.records import Record
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
    seeded_sample,
    study_id,
)
from medlens.runs.view import RunView

PAIRWISE = RatingProtocol(
    name="pairwise",
    title="Blinded side-by-side preference",
    instructions=(
        "Two responses answer the same question; which one is better? Judge clinical correctness "
        "first, then completeness and clarity. Write '1 better', 'equal' or '2 better'. The two "
        "responses come from different systems in a random order per item."
    ),
    axes=(
        Axis("preference", "Which response is better?",
             (Option("1 better", 1.0, ("1", "response 1", "1 is better")),
              Option("equal", 0.0, ("=", "tie", "same", "equally good")),
              Option("2 better", 2.0, ("2", "response 2", "2 is better"))),
             level="nominal"),
    ),
)  # fmt: skip


def export_pairwise(
    run_a: Path, run_b: Path, output: Path, sample: int, seed: int
) -> tuple[Study, list[Path]]:
    check_sample(sample)
    suffix = check_output(output)
    store_a, store_b = RunView(run_a), RunView(run_b)
    shared, records = _shared_answers(run_a, run_b, store_a, store_b)
    chosen = seeded_sample([i.id for i in shared], sample, seed)
    order = random.Random(f"pairwise-key-{seed}")
    key = {item: order.choice(("AB", "BA")) for item in chosen}
    what = {"run_b": store_b.run.get("spec_hash")}
    study = Study(
        study_id(store_a, "pairwise", what, seed, sample), "pairwise",
        f"pairwise-{Path(run_b).resolve().name}", PAIRWISE, chosen, seed,
        {"run_a": str(Path(run_a).resolve()), "run_b": str(Path(run_b).resolve()),
         "run_a_hash": store_a.run.get("spec_hash"), "run_b_hash": store_b.run.get("spec_hash"),
         "key": key, "sample": sample},
    )  # fmt: skip
    sheet = _sheet(study, {i.id: i for i in shared}, records, key)
    return study, _save(Path(run_a), output, suffix, sheet, study)


def _shared_answers(
    run_a: Path, run_b: Path, store_a: RunView, store_b: RunView
) -> tuple[list[Item], dict[str, dict[str, Record]]]:
    """Items both runs answered, and each run's records; runs of different benchmarks refused."""
    bench_a = store_a.run["spec"].get("benchmark", {}).get("content_hash")
    if bench_a != store_b.run["spec"].get("benchmark", {}).get("content_hash"):
        raise MedlensError(
            f"{run_a} and {run_b} are runs of different benchmarks (content hashes differ)"
        )
    if Path(run_a).resolve() == Path(run_b).resolve():
        raise MedlensError(f"{run_a}: RUN_A and RUN_B are the same run")
    items_a, records_a = answered_items(store_a)
    items_b, records_b = answered_items(store_b)
    answered_b = {i.id for i in items_b}
    shared = [i for i in items_a if i.id in answered_b]
    if not shared:
        raise MedlensError(f"{run_a} and {run_b} have no answered item in common")
    return shared, {"A": records_a, "B": records_b}


def _sheet(
    study: Study, by_id: dict[str, Item], records: dict[str, dict[str, Record]], key: dict[str, str]
) -> Sheet:
    rows = [
        (study.id, i, question_text(by_id[i]), gold_text(by_id[i]), image_names(by_id[i]),
         records[key[i][0]][i]["output"], records[key[i][1]][i]["output"],
         *([None] * (1 + len(RATER_COLUMNS))))
        for i in study.items
    ]  # fmt: skip
    return Sheet(
        header=["study", "id", "question", "reference", "images", "response_1", "response_2",
                "preference", *RATER_COLUMNS],
        rows=rows,
        instructions=instructions(PAIRWISE, study.id, "Which system wrote which response is hidden."),
        choices={"preference": [o.label for o in PAIRWISE.axes[0].options]},
    )  # fmt: skip
