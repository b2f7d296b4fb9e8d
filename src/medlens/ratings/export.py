"""`medlens ratings export`: a blinded sheet for people to rate a run's answers on a protocol."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.ratings.protocols import RatingProtocol, get_protocol
from medlens.ratings.sheets import RATER_COLUMNS, Sheet, check_output, sheet_bytes
from medlens.ratings.study import (
    Study,
    answered_items,
    check_sample,
    gold_text,
    image_names,
    question_text,
    save_study,
    seeded_sample,
    study_id,
)
from medlens.runs.view import RunView

ITEM_COLUMNS = ("study", "id", "question", "reference", "answer", "images")
RATER_HELP = (
    ("rater", "", "Your rater id (the same one on every sheet you fill)", "free text, required"),
    ("qualification", "", "Your qualification, e.g. 'radiologist, 6 years'", "free text"),
    ("date", "", "Date of rating", "YYYY-MM-DD"),
    ("comment", "", "Anything worth knowing about this item", "free text"),
)


NEEDS_REFERENCE = frozenset({"equivalence", "medcmr"})
"""Protocols whose raters compare the answer with the reference answer."""


def check_reference(protocol: RatingProtocol, with_reference: bool) -> None:
    """A protocol that compares with the reference, on answers that have none (HealthSearchQA),
    would give raters an empty `reference` column: refused, naming the protocol that fits."""
    if protocol.name in NEEDS_REFERENCE and not with_reference:
        raise MedlensError(
            f"--protocol {protocol.name} compares each answer with its reference answer, and "
            "these items have none (a split without answers, or HealthSearchQA): rate them "
            "with --protocol multimedqa"
        )


def default_protocol(run_dir: Path, judge: str | None) -> str:
    """The judge's protocol when a judge is named (rubric → medcmr), else equivalence."""
    if judge is None:
        return "equivalence"
    from medlens.runs.judgements import read_judge

    name = str(read_judge(run_dir, judge)["protocol"].get("name"))
    if name == "choice":
        raise MedlensError(f"judge {judge!r} uses the choice protocol; people rate with --protocol")
    return "medcmr" if name == "rubric" else name


def export_ratings(
    run_dir: Path, output: Path, sample: int, seed: int, protocol_spec: str | None,
    judge: str | None = None,
) -> tuple[Study, list[Path]]:  # fmt: skip
    """Sample answered items (judged ones with ``judge``), write the sheet and the study."""
    check_sample(sample)
    suffix = check_output(output)
    store = RunView(run_dir)
    items, records = answered_items(store)
    with_reference = any(item.answer is not None for item in items)
    default = default_protocol(run_dir, judge) if with_reference or judge else "multimedqa"
    protocol = get_protocol(protocol_spec or default)
    check_reference(protocol, with_reference)
    if judge is not None:
        from medlens.judges.verdicts import judged_values

        values, _, _ = judged_values(run_dir, judge)
        judged = {item for by_item in values.values() for item in by_item}
        items = [i for i in items if i.id in judged]
    if not items:
        raise MedlensError(f"{run_dir}: no answered{' and judged' if judge else ''} items to rate")
    chosen = seeded_sample([i.id for i in items], sample, seed)
    what = {"protocol": protocol.to_json(), "judge": judge}
    study = Study(study_id(store, "rating", what, seed, sample), "rating", _store_name(protocol),
                  protocol, chosen, seed, {"judge": judge, "sample": sample})  # fmt: skip
    by_id = {i.id: i for i in items}
    rows = [
        (study.id, i, question_text(by_id[i]), gold_text(by_id[i]), records[i].get("output"),
         image_names(by_id[i]), *([None] * (len(protocol.axes) + len(RATER_COLUMNS))))
        for i in chosen
    ]  # fmt: skip
    sheet = Sheet(
        header=[*ITEM_COLUMNS, *(a.name for a in protocol.axes), *RATER_COLUMNS],
        rows=rows,
        instructions=instructions(protocol, study.id, "The model's identity is hidden."),
        choices={a.name: [o.label for o in a.options] for a in protocol.axes},
    )
    return study, _save(run_dir, output, suffix, sheet, study)


def _store_name(protocol: RatingProtocol) -> str:
    if protocol.name.startswith("file:"):
        return "file-" + Path(protocol.name[5:]).stem
    return protocol.name


def _save(run_dir: Path, output: Path, suffix: str, sheet: Sheet, study: Study) -> list[Path]:
    """Build every byte first, then write the study, then the sheet (each atomically)."""
    from medlens.ratings.sheets import write_bytes_atomic

    contents = sheet_bytes(sheet, suffix)
    save_study(run_dir, study)
    written = []
    for extra, content in contents.items():
        target = output.with_name(output.stem + extra) if extra else output
        write_bytes_atomic(target, content)
        written.append(target)
    return written


def instructions(
    protocol: RatingProtocol, study: str, note: str, extra: Sequence[Sequence[Any]] = ()
) -> list[Sequence[Any]]:
    """The instructions sheet: what to do, then one row per column with definition and values."""
    rows: list[Sequence[Any]] = [
        ("medlens rating sheet", protocol.title),
        ("study", study),
        ("instructions", protocol.instructions),
        ("note", note + " Fill one row per item; leave a row empty to skip it. Do not change "
         "the study or id columns. Several raters: each fills their own copy."),
        (),
        ("column", "axis", "definition", "allowed values"),
    ]  # fmt: skip
    rows += [(a.name, a.group, a.definition, a.allowed()) for a in protocol.axes]
    rows += [*extra, *RATER_HELP]
    return rows
