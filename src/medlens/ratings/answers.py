"""The human upper bound: an answer sheet for experts, imported as a run labelled "human".

``medlens ratings export RUN --protocol answer --sample N --output sheet.xlsx`` writes a seeded
sample of RUN's answered items with a gold answer (all items when nothing is answered yet) as questions to answer (no gold, no model answer), their
images copied beside the sheet (``<sheet>-images/``) and named in the sheet by relative path.
``medlens ratings import RUN sheet.xlsx`` stores one rater's answers as a run of its own
(``<RUN>-human-<rater>`` beside RUN): the benchmark's items and fingerprint, model ``human``, and
one record per answered item read and scored exactly as a model's answer is (the run's own
extraction mode), so ``report``, ``compare`` and ``board`` treat it like any model. Re-importing
adds only new answers; every row is checked before anything is written.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError
from medlens.core.items import Item
from medlens.execution.replies import make_record
from medlens.models.base import Response
from medlens.ratings.protocols import RatingProtocol
from medlens.ratings.sheets import FilledSheet, Sheet, check_output, read_sheet, sheet_bytes
from medlens.ratings.study import (
    Study,
    check_sample,
    load_study,
    question_text,
    save_study,
    seeded_sample,
    study_id,
)
from medlens.runs.layout import is_run
from medlens.runs.store import RunStore
from medlens.runs.view import RunView

ANSWER_PROTOCOL = RatingProtocol(
    name="answer",
    title="Answer the questions (human upper bound)",
    instructions=(
        "Answer each question as you would in practice, looking at its images (the files named "
        "in the images column, in the folder beside this sheet). Choice questions: the option "
        "letter (several letters separated by commas where more than one is correct); yes/no "
        "questions: yes or no; others: a short answer. Leave a row empty to skip it."
    ),
    axes=(),
)
ANSWER_COLUMNS = ("study", "id", "question", "images", "answer")
RATER = ("rater", "qualification", "date", "comment")
HUMAN_MODEL = "human"


def export_answer_sheet(
    run_dir: Path, output: Path, sample: int, seed: int
) -> tuple[Study, list[Path]]:
    """Sample items with gold answers, copy their images, write the sheet and the study."""
    from medlens.ratings.export import instructions
    from medlens.ratings.sheets import write_bytes_atomic

    check_sample(sample)
    suffix = check_output(output)
    store = RunView(run_dir)
    answered = set(store.records())  # the items the model answered, so both compare on them
    items = {i.id: i for i in store.items() if i.answer is not None and (i.id in answered
                                                                       or not answered)}  # fmt: skip
    if not items:
        raise MedlensError(f"{run_dir}: no items with a gold answer to ask")
    chosen = seeded_sample(list(items), sample, seed)
    study = Study(study_id(store, "answer", {"protocol": "answer"}, seed, sample), "answer",
                  "answer", ANSWER_PROTOCOL, chosen, seed, {"sample": sample})  # fmt: skip
    folder = output.with_name(output.stem + "-images")
    images = {i: _image_files(items[i], folder) for i in chosen}
    rows = [(study.id, i, question_text(items[i]), ", ".join(images[i]), None, *([None] * 4))
            for i in chosen]  # fmt: skip
    note = "Your answers are compared with the reference answers after you return the sheet."
    sheet = Sheet(
        [*ANSWER_COLUMNS, *RATER], rows, instructions(ANSWER_PROTOCOL, study.id, note), {}
    )
    contents = sheet_bytes(sheet, suffix)  # every byte built before anything is written
    save_study(run_dir, study)
    folder.mkdir(parents=True, exist_ok=True)
    for item_id, names in images.items():
        for name, data in zip(names, _image_bytes(items[item_id]), strict=True):
            write_bytes_atomic(output.parent / name, data)
    written = []
    for extra, content in contents.items():
        target = output.with_name(output.stem + extra) if extra else output
        write_bytes_atomic(target, content)
        written.append(target)
    return study, written


def _image_bytes(item: Item) -> list[bytes]:
    return [image.read_bytes() for image in item.images]


def _image_files(item: Item, folder: Path) -> list[str]:
    """Sheet-relative file names of the item's images (``<sheet>-images/<id>-<k><suffix>``)."""
    names = []
    for index, image in enumerate(item.images):
        suffix = Path(image.name or image.path).suffix.lower() or ".png"
        safe = re.sub(r"[^A-Za-z0-9._-]+", "_", item.id)
        names.append(f"{folder.name}/{safe}-{index}{suffix}")
    return names


def answer_study(run_dir: Path, file: Path) -> Study | None:
    """The sheet's study when it is an answer sheet, else None (another kind of sheet)."""
    sheet = read_sheet(file)
    if "study" not in sheet.header or not sheet.rows:
        return None
    row, cells = sheet.rows[0]
    study = load_study(run_dir, cells.get("study", ""), sheet.path, row)
    return study if study.kind == "answer" else None


def import_answers(run_dir: Path, file: Path, study: Study) -> tuple[RunStore, int, int]:
    """One rater's answers as the run ``<RUN>-human-<rater>``, written under its lock;
    (store, answered rows, added). Its results are derived as any run's, when asked for."""
    from medlens.runs.lock import hold_run_lock

    sheet = read_sheet(file)
    answers, rater = _checked_answers(sheet, study)  # every row checked before any write
    source = RunView(run_dir)
    spec = _human_spec(source.run["spec"])
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", rater["rater"]).strip("_.") or "rater"
    target = run_dir.parent / f"{run_dir.name}-human-{slug}"
    if is_run(target):
        from medlens.runs.store import check_same_spec

        check_same_spec(target, spec)
    target.mkdir(parents=True, exist_ok=True)
    with hold_run_lock(target, "medlens ratings import"):
        store = RunStore.open_or_create(target, spec, source.items())
        added = _store_answers(store, source, answers, {**rater, "study": study.id,
                                                        "from_run": run_dir.name})  # fmt: skip
    return store, len(answers), added


def _store_answers(
    store: RunStore, source: RunView, answers: dict[str, str], who: dict[str, str]
) -> int:
    """Record the answers not stored yet, read and scored as a model's; run.json names who."""
    items = {item.id: item for item in source.items()}
    spec = store.run["spec"]
    store.run["human"] = who
    store.save_run()
    done = store.done_ids()
    added = 0
    try:
        for item_id, text in answers.items():
            if item_id in done:
                continue
            record = make_record(items[item_id], None, Response(text=text), str(spec["extract"]))
            store.append({**record, "latency": 0.0})
            added += 1
    finally:
        store.close()
    return added


def _human_spec(spec: dict[str, Any]) -> dict[str, Any]:
    """The source run's spec as a person answered it: model ``human``, nothing sent."""
    kept = {k: v for k, v in spec.items() if k not in ("strategy", "params", "selection")}
    return {**kept, "model": HUMAN_MODEL, "probe": None, "params": {}}


def _checked_answers(sheet: FilledSheet, study: Study) -> tuple[dict[str, str], dict[str, str]]:
    """id → answer of the answered rows, and the one rater; InputError at the first bad cell."""
    for column in ANSWER_COLUMNS:
        if column not in sheet.header:
            raise InputError(sheet.path, f"row 1, column {column!r}", "column missing")
    known = set(study.items)
    answers: dict[str, str] = {}
    raters: dict[str, dict[str, str]] = {}
    for row, cells in sheet.rows:
        if cells.get("study") != study.id:
            raise InputError(sheet.path, f"row {row}, column 'study'", f"not study {study.id}")
        if cells["id"] not in known:
            problem = f"id {cells['id']!r} is not an item of study {study.id}"
            raise InputError(sheet.path, f"row {row}, column 'id'", problem)
        if not cells.get("answer", "").strip():
            continue
        if cells["id"] in answers:
            problem = f"{cells['id']!r} answered twice"
            raise InputError(sheet.path, f"row {row}, column 'id'", problem)
        rater = cells.get("rater", "").strip()
        if not rater:
            problem = "an answered row needs a rater id"
            raise InputError(sheet.path, f"row {row}, column 'rater'", problem)
        raters.setdefault(rater, {k: cells.get(k, "") for k in ("rater", "qualification")})
        answers[cells["id"]] = cells["answer"].strip()
    if not answers:
        raise InputError(sheet.path, "column 'answer'", "no row is answered")
    if len(raters) > 1:
        problem = (f"answers from {len(raters)} raters ({', '.join(sorted(raters))}): import "
                   "one rater's sheet at a time")  # fmt: skip
        raise InputError(sheet.path, "column 'rater'", problem)
    return answers, next(iter(raters.values()))


__all__ = ["ANSWER_PROTOCOL", "answer_study", "export_answer_sheet", "import_answers"]
