"""`medlens reading extract`: read answers from model outputs given as JSON lines on stdin.

One JSON line in (``{"output": "...", "options": {"A": "...", ...}}``), one JSON line out
(``{"answer": ..., "status": ..., "method": ...}``), so users can see why an output was scored
the way it was. A line may also give the ``question`` (yes/no statements are read against it,
open answers may use its words as a frame) and the ``gold``, which adds the main ``score`` (and,
for ``--kind open``, the looser ``contains``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from medlens.cli.common import command
from medlens.cli.groups import reading_app
from medlens.core.errors import InputError
from medlens.core.items import Item, ItemKind
from medlens.core.terminal import terminal_safe_json

if TYPE_CHECKING:  # the rules load with the command that uses them, not with every command
    from medlens.extract import Mode

STDIN = "<stdin>"


class ClosedKind(str, Enum):
    choice = "choice"
    multi_choice = "multi_choice"
    yes_no = "yes_no"
    open = "open"


class ExtractMode(str, Enum):
    medlens = "medlens"
    vlmeval = "vlmeval"


@command("extract", under=reading_app)
def extract_command(
    kind: Annotated[ClosedKind, typer.Option("--kind", help="Question kind of every input line")],
    mode: Annotated[
        ExtractMode, typer.Option("--mode", help="medlens rules, or VLMEvalKit's exact matching")
    ] = ExtractMode.medlens,
    maybe: Annotated[
        bool, typer.Option("--maybe", help="yes_no: accept 'maybe' as an answer (PubMedQA)")
    ] = False,
    vocab: Annotated[
        list[Path] | None,
        typer.Option("--vocab", help="Extra vocabulary file (medlens reading vocab)"),
    ] = None,
) -> None:
    """Read answers from JSON lines {"output": ..., "options": {...}} on stdin, one JSON line out each."""
    from medlens.extract import extract
    from medlens.extract.vocabulary import use_vocabulary

    use_vocabulary(tuple(str(path) for path in vocab or ()))
    for item, output in parse_lines(sys.stdin, kind.value, maybe):
        extraction = extract(item, output, _mode(mode))
        shown: dict[str, Any] = extraction.to_json()
        if item.answer is not None:
            shown.update(_scores(item, extraction))
            if str(shown.get("reading", "")).startswith("vocab:"):  # as a run's record names it
                shown["method"] = f"{shown['method']}:{shown['reading']}"
        sys.stdout.write(terminal_safe_json(json.dumps(shown, ensure_ascii=False)) + "\n")
        sys.stdout.flush()


def _scores(item: Item, extraction: Any) -> dict[str, Any]:
    from medlens.scoring.item_scores import item_scores, score

    found: dict[str, Any] = {"score": score(item, extraction)}
    if item.kind == "open" and extraction.answer is not None:
        from medlens.scoring.item_scores import open_assertion

        found["reading"] = open_assertion(item, extraction.answer).rule
    if item.kind == "open":
        found["contains"] = item_scores(item, extraction)["contains"]
    return found


def _mode(mode: ExtractMode) -> Mode:
    return "vlmeval" if mode is ExtractMode.vlmeval else "medlens"


def parse_lines(
    lines: Iterable[str], kind: ItemKind, maybe: bool = False
) -> Iterator[tuple[Item, str | None]]:
    """(item, output) per non-blank line; InputError naming the line for anything malformed."""
    meta = {"answer_set": "yes/no/maybe"} if maybe else {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        record = _parse_record(line, number)
        options = _options(record, number, required=kind in ("choice", "multi_choice"))
        question, gold = _text(record, "question", number), _text(record, "gold", number)
        if gold is not None and kind == "yes_no":
            gold = gold.strip().lower()
        item = Item(str(number), question or "", kind, options=options, answer=gold, meta=meta)
        yield item, record["output"]


def _text(record: dict[str, Any], key: str, number: int) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise InputError(STDIN, f"line {number}", f"field {key!r} must be a string")
    return value


def _parse_record(line: str, number: int) -> dict[str, Any]:
    where = f"line {number}"
    try:
        record = json.loads(line.strip())
    except json.JSONDecodeError as exc:
        raise InputError(
            STDIN, where, f"not valid JSON ({exc.msg} at column {exc.colno})"
        ) from None
    if not isinstance(record, dict):
        raise InputError(STDIN, where, "expected a JSON object with an 'output' field")
    if "output" not in record:
        raise InputError(STDIN, where, "field 'output' is missing")
    if record["output"] is not None and not isinstance(record["output"], str):
        raise InputError(STDIN, where, "field 'output' must be a string or null")
    return record


def _options(record: dict[str, Any], number: int, required: bool) -> dict[str, str]:
    where = f"line {number}"
    options = record.get("options")
    if options is None or options == {}:
        if required:
            raise InputError(STDIN, where, "field 'options' is missing or empty")
        return {}
    if not isinstance(options, dict) or not all(
        isinstance(key, str) and len(key) == 1 and key.isupper() and isinstance(value, str)
        for key, value in options.items()
    ):
        raise InputError(STDIN, where, "field 'options' must map letters A-Z to option texts")
    return options
