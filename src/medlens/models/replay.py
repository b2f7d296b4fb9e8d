"""The ``replay:FILE`` model: answers read from earlier predictions instead of a live model.

FILE is a VLMEvalKit prediction file (``.tsv``, ``.csv`` or ``.xlsx`` with ``index`` and
``prediction`` columns), MMBU's official output JSONL (``.jsonl`` rows with ``index`` and the
model's output under ``answer``, beside ``class_label``: dcunhrya/MMBU-vlm-eval
``src/run_vlm_eval.py``), or another medlens run directory (its records' ``output``). Replaying
the same predictions through medlens's extraction and scoring is how results are reproduced
and compared with VLMEvalKit's own numbers.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medlens.core.errors import InputError, MedlensError, SpecError
from medlens.core.specs import Spec, check_options
from medlens.models.base import ModelContext, ModelError, Request, Response
from medlens.models.prediction_table import read_columns
from medlens.models.replay_mmbu import (
    check_questions,
    folder_predictions,
    is_output_folder,
    same_question,
)

if TYPE_CHECKING:
    from medlens.core.items import Item

TABLE_SUFFIXES = (".tsv", ".csv", ".xlsx")
_FLOAT_INDEX = re.compile(r"^(-?\d+)\.0+$")


class ReplayModel:
    """Looks up each item's prediction by item id."""

    deterministic = True
    # A dictionary lookup is cheaper than the response cache.
    worth_caching = False
    reads_images = False  # the predictions are already written: no image is read or decoded
    generation_note = (
        "none sent: replayed answers (medlens sent no prompt; the answers' own run did)"
    )

    def __init__(self, spec: str, source: Path, predictions: Mapping[str, str]) -> None:
        self.spec = spec
        self.source = source
        self.predictions = predictions
        self.notes: list[str] = []
        """Said before the run starts (items without a prediction)."""

    async def generate(self, request: Request) -> Response:
        text = self.predictions.get(request.item.id)
        if text is None:
            message = f"no prediction for item {request.item.id!r} in {self.source}"
            return Response(text=None, error=ModelError("input", message))
        return Response(text=text)

    async def aclose(self) -> None:
        return None


def make_replay(spec: Spec, context: ModelContext) -> ReplayModel:
    """Build the replay model for ``replay:FILE``; file problems raise InputError."""
    check_options(spec, set())
    if not spec.argument:
        raise SpecError("replay needs a file or run directory: replay:PATH")
    source = Path(spec.argument)
    if is_output_folder(source):  # MMBU's official outputs, one JSONL per task
        predictions, asked = folder_predictions(source, context.items, _jsonl_rows)
        check_questions(source, asked, context.items)
    else:
        table = source.is_file() and source.suffix.lower() in TABLE_SUFFIXES
        predictions, questions = _table_rows(source) if table else (load_predictions(source), None)
        if source.is_dir():
            check_same_questions(source, context.items)
        elif context.items:
            questions = questions if table else _table_questions(source)
            check_table_questions(source, questions, context.items)
    canonical = f"replay:{source}?sha256={_digest(predictions)}"
    model = ReplayModel(canonical, source, predictions)
    model.notes = coverage_notes(source, predictions, context.items)
    return model


def coverage_notes(
    source: Path, predictions: Mapping[str, str], items: Sequence[Item]
) -> list[str]:
    """Refuse predictions that match no item (another benchmark); say how many items lack one."""
    if not items:
        return []
    missing = sum(1 for item in items if item.id not in predictions)
    if missing == len(items):
        raise InputError(
            source,
            None,
            f"none of its {len(predictions)} predictions has the index of an item of this "
            "benchmark: predictions of another benchmark?",
        )
    if not missing:
        return []
    return [
        f"{source} has no prediction for {missing} of {len(items)} items: "
        "they will be recorded as input errors"
    ]


def check_table_questions(
    source: Path, questions: Mapping[str, str] | None, items: Sequence[Item]
) -> None:
    """With a `question` column (VLMEvalKit files have one), each matched prediction must ask its
    item's question (whitespace-normalised); the first mismatching index is named."""
    if questions is None:
        return
    for item in items:
        theirs = questions.get(item.id)
        if theirs is None or not item.question:
            continue
        if not same_question(theirs, item):
            raise InputError(
                source,
                f"index {item.id!r}",
                f"column 'question' asks {theirs[:60]!r}, but this benchmark's item asks "
                f"{item.question[:60]!r}: predictions of another benchmark or split?",
            )


def load_predictions(source: Path) -> dict[str, str]:
    """Item id → prediction text from a prediction table or a medlens run directory."""
    if source.is_dir():
        return _run_predictions(source)
    if not source.is_file():
        raise InputError(source, None, "no such prediction file or run directory")
    if source.suffix.lower() == ".jsonl":
        return _jsonl_predictions(source)
    if source.suffix.lower() not in TABLE_SUFFIXES:
        known = ", ".join((*TABLE_SUFFIXES, ".jsonl"))
        raise InputError(source, None, f"unknown prediction format (use {known})")
    return _table_predictions(source)


def _jsonl_predictions(source: Path) -> dict[str, str]:
    """MMBU's output JSONL: ``index`` → ``answer`` (the model's output) on every line."""
    return _jsonl_rows(source)[0]


def _jsonl_rows(source: Path) -> tuple[dict[str, str], dict[str, str]]:
    """(index → answer, index → question) of one MMBU output JSONL."""
    from medlens.sources.native import read_jsonl

    predictions: dict[str, str] = {}
    questions: dict[str, str] = {}
    for where, row in read_jsonl(source):
        for field in ("index", "answer"):
            if row.get(field) is None:
                raise InputError(source, f"{where}, field {field!r}", "missing (MMBU's output)")
        item_id = _normalise_index(str(row["index"]))
        if item_id in predictions:
            raise InputError(source, f"{where}, field 'index'", f"duplicate index {item_id!r}")
        predictions[item_id] = str(row["answer"])
        if row.get("question") is not None:
            questions[item_id] = str(row["question"])
    return predictions, questions


def check_same_questions(run_dir: Path, items: Sequence[Item]) -> None:
    """Refuse a run of another benchmark: matching by id alone would pair unrelated questions
    (VQA-RAD's qids and GMAI's indices overlap). Empty questions (options-only probe) pass."""
    from medlens.runs.view import RunView

    store = RunView(run_dir)
    theirs = {item.id: item.question for item in store.items()}
    for item in items:
        question = theirs.get(item.id)
        if question and item.question and question != item.question:
            bench = store.run["spec"]["benchmark"].get("spec", "another benchmark")
            raise InputError(
                run_dir,
                f"item {item.id!r}",
                f"recorded on {bench}, where this id asks another question; "
                "replay a run of the same benchmark",
            )


def _run_predictions(source: Path) -> dict[str, str]:
    from medlens.runs.view import RunView

    store = RunView(source)
    try:
        store.run  # noqa: B018 - run.json read here: a folder without one is named as such
    except MedlensError as exc:
        raise InputError(source, None, f"not a medlens run directory ({exc})") from None
    return {
        item_id: record["output"]
        for item_id, record in store.records().items()
        if record.get("error") is None and record.get("output") is not None
    }


def _table_predictions(source: Path) -> dict[str, str]:
    """Read the two columns as text; empty prediction cells become empty strings."""
    return _table_rows(source)[0]


def _table_rows(source: Path) -> tuple[dict[str, str], dict[str, str] | None]:
    """(index → prediction, index → question or None without a `question` column), from one
    reading of the table."""
    chosen: dict[str, str | None] = {}

    def choose(columns: list[str]) -> list[str]:
        chosen["index"] = _find_column(source, columns, "index")
        chosen["prediction"] = _find_column(source, columns, "prediction")
        has_question = any(c.strip().lower() == "question" for c in columns)
        chosen["question"] = _find_column(source, columns, "question") if has_question else None
        return [column for column in chosen.values() if column is not None]

    table = read_columns(source, choose)
    index_column, prediction_column = str(chosen["index"]), str(chosen["prediction"])
    predictions: dict[str, str] = {}
    for row, (raw_index, text) in enumerate(
        zip(table[index_column], table[prediction_column], strict=True)
    ):
        item_id = _normalise_index(raw_index)
        where = f"row {row + 2}"  # 1-based, after the header line
        if not item_id:
            raise InputError(source, where, f"column {index_column!r} is empty")
        if item_id in predictions:
            raise InputError(source, where, f"column {index_column!r}: duplicate index {item_id!r}")
        predictions[item_id] = text
    question_column = chosen["question"]
    if question_column is None:
        return predictions, None
    questions = zip(table[index_column], table[question_column], strict=True)
    return predictions, {_normalise_index(index): question for index, question in questions}


def _table_questions(source: Path) -> dict[str, str] | None:
    """Index → question text when the table has a `question` column, else None."""
    if source.suffix.lower() == ".jsonl":
        import json

        rows = [
            json.loads(line) for line in source.read_text("utf-8-sig").splitlines() if line.strip()
        ]
        asked = {
            _normalise_index(str(r["index"])): str(r["question"]) for r in rows if "question" in r
        }
        return asked or None
    return _table_rows(source)[1]


def _find_column(source: Path, columns: list[str], name: str) -> str:
    """The column called `name`, matched case-insensitively as VLMEvalKit does."""
    for column in columns:
        if column.strip().lower() == name:
            return column
    raise InputError(source, "header", f"no {name!r} column (columns: {', '.join(columns)})")


def _normalise_index(raw: str) -> str:
    """Spreadsheets turn the integer index 12 into 12.0; item ids are the integer text."""
    text = raw.strip()
    match = _FLOAT_INDEX.match(text)
    return match.group(1) if match else text


def _digest(predictions: Mapping[str, str]) -> str:
    """Short content hash so that a changed prediction file is a different model spec."""
    digest = hashlib.sha256()
    for item_id in sorted(predictions):
        digest.update(f"{item_id}\0{predictions[item_id]}\0".encode())
    return digest.hexdigest()[:16]
