"""The real-output reading corpus: files of model outputs, each line with a careful reader's
verdict, loaded and checked line by line (``tests/reading_corpus/``; layout and line format in
``tests/reading_corpus/README.md``).

One JSONL file per (source, model, dataset) under ``<root>/<dataset>/``, each beside a provenance
sidecar ``<name>.source.json``. A line that breaks the format, or a sidecar without a
redistributable licence or its repository, path and commit, is an :class:`InputError` naming the
file, the line and the field. Imports ``core``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError

KINDS = ("choice", "multi_choice", "yes_no", "open", "classify")
READER_CLASSES = (
    "letter_only", "short", "verbose", "cut", "option_by_option", "reasoning_then_answer",
    "refusal", "non_answer", "list_or_hedge", "negation", "synonym", "other",
)  # fmt: skip
ALLOWED_LICENCE = re.compile(
    r"^(?:MIT|Apache-2\.0|BSD-[234]-Clause(?:-Clear)?|BSD|0BSD|ISC|Unlicense|CC0(?:-1\.0)?|"
    r"CC-BY-[1-4]\.0|CC-BY-4\.0|CC-BY|CDLA-Permissive-[12]\.0|PDDL-1\.0|ODC-By-1\.0)$"
)
"""Licences that allow redistribution of the outputs (no NC, ND or copyleft terms)."""
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
_VERDICT_BY = re.compile(r"^(?:read|rule:[a-z0-9_\-]+)$")
_SIDECAR_FIELDS = ("repository", "path", "commit", "licence")
_LETTERS = re.compile(r"^[A-Z]+$")


@dataclass(frozen=True)
class CorpusLine:
    """One model output with the careful reader's verdict."""

    file: str
    """The file's path under the corpus root (``vqa-rad/llava__src.jsonl``)."""
    line: int
    dataset: str
    id: str
    kind: str
    question: str
    options: Mapping[str, str]
    gold: str
    output: str | None
    finish_reason: str | None
    reader_answer: str | None
    reader_credited: bool
    reader_class: str
    verdict_by: str
    note: str = ""


@dataclass
class CorpusFile:
    """One corpus file's lines and its sidecar."""

    name: str
    lines: list[CorpusLine] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=dict)


def corpus_files(root: Path) -> list[Path]:
    """Every ``*.jsonl`` corpus file under `root`, in a stable order."""
    return sorted(path for path in root.glob("*/*.jsonl") if path.is_file())


def load_corpus(root: Path) -> list[CorpusFile]:
    """Every corpus file under `root`, each line and sidecar checked."""
    return [load_file(path, root) for path in corpus_files(root)]


def load_file(path: Path, root: Path) -> CorpusFile:
    name = path.relative_to(root).as_posix()
    found = CorpusFile(name, source=load_sidecar(sidecar_of(path)))
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                found.lines.append(parse_line(raw, path, number, name))
    if not found.lines:
        raise InputError(path, None, "no lines: a corpus file holds at least one output")
    return found


def sidecar_of(path: Path) -> Path:
    return path.with_name(path.name.removesuffix(".jsonl") + ".source.json")


def load_sidecar(path: Path) -> dict[str, Any]:
    """The provenance sidecar, checked: a redistributable licence, repository, path, commit."""
    if not path.is_file():
        raise InputError(path, None, "missing: every corpus file needs its provenance sidecar")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(path, None, f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise InputError(path, None, "not a JSON object")
    for key in _SIDECAR_FIELDS:
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise InputError(path, f"field '{key}'", "missing or empty")
    if not _COMMIT.match(data["commit"]):
        raise InputError(path, "field 'commit'", f"{data['commit']!r} is not a 40-hex commit")
    if not ALLOWED_LICENCE.match(data["licence"].strip()):
        raise InputError(
            path,
            "field 'licence'",
            f"{data['licence']!r} does not allow redistribution (MIT, Apache-2.0, BSD, CC-BY, CC0)",
        )
    return data


def parse_line(raw: str, path: Path, number: int, name: str) -> CorpusLine:
    """One line, every field checked; an :class:`InputError` names the line and field."""
    where = f"line {number}"
    try:
        data = json.loads(raw)
    except ValueError as error:
        raise InputError(path, where, f"not JSON ({error})") from None
    if not isinstance(data, dict):
        raise InputError(path, where, "not a JSON object")
    fields = _Fields(data, path, where)
    kind = fields.text("kind")
    if kind not in KINDS:
        raise InputError(
            path, f"{where}, field 'kind'", f"{kind!r} is not one of {', '.join(KINDS)}"
        )
    options = fields.options()
    if kind in ("choice", "multi_choice") and not options:
        raise InputError(path, f"{where}, field 'options'", f"a {kind} line needs its options")
    reader = fields.reader()
    gold = fields.gold(kind, options)
    if kind in ("choice", "multi_choice", "yes_no") and reader["credited"] != _same(
        kind, reader["answer"], gold
    ):
        raise fields.fail("reader", f"credited {reader['credited']} but answer "
                          f"{reader['answer']!r} against gold {gold!r}")  # fmt: skip
    return CorpusLine(
        file=name,
        line=number,
        dataset=name.split("/")[0],
        id=fields.text("id"),
        kind=kind,
        question=fields.text("question", empty=True),
        options=options,
        gold=gold,
        output=fields.output(),
        finish_reason=fields.optional("finish_reason"),
        reader_answer=reader["answer"],
        reader_credited=reader["credited"],
        reader_class=reader["class"],
        verdict_by=fields.verdict_by(),
        note=reader["note"],
    )


def _same(kind: str, answer: str | None, gold: str) -> bool:
    if answer is None:
        return False
    if kind == "yes_no":
        return answer.strip().lower() == gold
    return sorted(set(answer.strip().upper())) == sorted(set(gold))


class _Fields:
    """Typed access to one line's fields, each failure naming the field."""

    def __init__(self, data: dict[str, Any], path: Path, where: str) -> None:
        self.data, self.path, self.where = data, path, where

    def fail(self, key: str, problem: str) -> InputError:
        return InputError(self.path, f"{self.where}, field '{key}'", problem)

    def text(self, key: str, *, empty: bool = False) -> str:
        value = self.data.get(key)
        if not isinstance(value, str) or (not empty and not value.strip()):
            raise self.fail(key, "missing, not a string, or empty")
        return value

    def optional(self, key: str) -> str | None:
        value = self.data.get(key)
        if value is not None and not isinstance(value, str):
            raise self.fail(key, "must be a string or null")
        return value

    def output(self) -> str | None:
        if "output" not in self.data:
            raise self.fail("output", "missing (the model's text exactly as the source holds it)")
        return self.optional("output")

    def options(self) -> dict[str, str]:
        value = self.data.get("options", {})
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and len(k) == 1 and k.isupper() and isinstance(v, str)
            for k, v in value.items()
        ):
            raise self.fail("options", "must map one upper-case letter to its text")
        return value

    def gold(self, kind: str, options: Mapping[str, str]) -> str:
        gold = self.text("gold")
        if kind in ("choice", "multi_choice"):
            if not _LETTERS.match(gold) or not set(gold) <= set(options):
                raise self.fail("gold", f"{gold!r} is not a letter of the options")
            if kind == "choice" and len(gold) != 1:
                raise self.fail("gold", f"{gold!r}: a choice line has one gold letter")
        if kind == "yes_no" and gold not in ("yes", "no", "maybe"):
            raise self.fail("gold", f"{gold!r} is not yes, no or maybe")
        return gold

    def reader(self) -> dict[str, Any]:
        reader = self.data.get("reader")
        if not isinstance(reader, dict):
            raise self.fail("reader", "missing or not an object")
        answer, credited = reader.get("answer"), reader.get("credited")
        if answer is not None and not isinstance(answer, str):
            raise self.fail("reader.answer", "must be a string or null")
        if not isinstance(credited, bool):
            raise self.fail("reader.credited", "must be true or false")
        if reader.get("class") not in READER_CLASSES:
            raise self.fail("reader.class", f"{reader.get('class')!r} is not a reader class")
        note = reader.get("note", "")
        if not isinstance(note, str):
            raise self.fail("reader.note", "must be a string")
        return {"answer": answer, "credited": credited, "class": reader["class"], "note": note}

    def verdict_by(self) -> str:
        value = self.data.get("verdict_by")
        if not isinstance(value, str) or not _VERDICT_BY.match(value):
            raise self.fail("verdict_by", "must be 'read' or 'rule:<name>'")
        return value
