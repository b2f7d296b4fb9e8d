"""The exact reading of a run's files: run.json, items.jsonl and records.jsonl.

These rules decide what a run holds; every faster path (:mod:`medlens.runs.columns`, the
record index of :mod:`medlens.runs.view`) is checked against them and falls back to them.

- ``run.json`` must hold a spec object.
- ``items.jsonl``: one item per non-blank line; a line that is no item is an error naming the
  file and line (a run's items are written whole by medlens, so damage there is not a kill).
- ``records.jsonl``: append-only; each item's latest record wins, except that an answer is
  never replaced by a later error (a retried item keeps its error only while it has no answer);
  a line that is not a JSON object with a string ``id`` is damaged (listed, skipped); text after
  the last newline is a torn last line (a killed write), listed and dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.files import JsonLines, line_reader
from medlens.runs.layout import items_file, records_file, run_file


def read_run_file(path: Path | str) -> dict[str, Any]:
    """The run.json of the run directory `path`, checked to hold a spec object."""
    file = run_file(path)
    if not file.is_file():
        raise MedlensError(f"{path}: not a medlens run directory (no run.json)")
    try:
        run = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MedlensError(f"{file}: unreadable ({exc})") from None
    if not isinstance(run, dict) or not isinstance(run.get("spec"), dict):
        raise MedlensError(f"{file}: not a medlens run file (no spec object)")
    return run


@dataclass
class RecordsRead:
    """What records.jsonl holds, by the store's rules."""

    latest: dict[str, Record] = field(default_factory=dict)
    """Each item's record (see the module docstring), in the order items first appear."""
    damaged: list[str] = field(default_factory=list)
    """One message per line that is not a record (file and line number), the torn last line
    included."""
    lines: int = 0
    """Whole lines in the file (records, damaged and blank)."""
    dirty: bool = False
    """True when compaction would change the file (damage, a torn line, repeated items)."""


def is_record(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str)


def read_records(path: Path | str) -> RecordsRead:
    """records.jsonl of the run at `path` by the store's rules (an absent file: no records)."""
    file = records_file(path)
    content = JsonLines(file).read()
    out = RecordsRead(lines=len(content.lines), dirty=content.tail is not None)
    if content.tail is not None:
        out.damaged.append(f"{file}, line {content.tail.number}: torn last line (a killed write)")
    for line in content.lines:
        if not is_record(line.value):
            out.dirty = True
            if not line.blank:
                out.damaged.append(
                    f"{file}, line {line.number}: damaged (not a JSON record with an id)"
                )
            continue
        record: Record = line.value
        previous = out.latest.get(record["id"])
        out.dirty = out.dirty or previous is not None
        if previous is None or record.get("error") is None or previous.get("error") is not None:
            out.latest[record["id"]] = record
    return out


def _item_lines(path: Path | str, build: Callable[[Any], Any]) -> list[Any]:
    """`build` of each non-blank line of items.jsonl; a line it refuses is an error."""
    file = items_file(path)
    if not file.is_file():
        raise MedlensError(f"{path}: run has no items.jsonl")
    out = []
    whole = file.read_bytes()
    read = line_reader(whole)
    for number, line in enumerate(whole.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(build(read(line)))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            problem = f"missing field {exc}" if isinstance(exc, KeyError) else exc
            raise MedlensError(f"{file}, line {number}: not an item ({problem})") from None
    return out


def read_items(path: Path | str) -> list[Item]:
    """The run's items, in file order."""
    return _item_lines(path, Item.from_json)


def _raw_item(value: Any) -> dict[str, Any]:
    value["id"]  # an object with an id, or the error the line is named by
    item: dict[str, Any] = value
    return item


def read_raw_items(path: Path | str) -> dict[str, dict[str, Any]]:
    """Every item of items.jsonl as its JSON object, in file order (id → object): what the
    viewer's list needs without building an Item per row."""
    return {str(value["id"]): value for value in _item_lines(path, _raw_item)}


def describe_difference(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> str:
    """A short human list of the keys whose values differ between two specs."""
    diffs = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            diffs.append(describe_difference(a, b, f"{prefix}{key}."))
        else:
            diffs.append(f"{prefix}{key}: {json.dumps(a)} → {json.dumps(b)}")
    return "; ".join(d for d in diffs if d)
