"""A run's items and records as the viewer reads them: indexed at start, parsed when a page
asks for them.

Start-up reads what the list needs for every row — ids, axes, kinds (``items.jsonl``, parsed
by orjson into plain dicts, shared by runs whose file is the same) and each run's outcomes
(its derived score file) — and only indexes ``records.jsonl``: the byte range of each item's
line. An ``Item`` or a record is built the first time a page shows it. A records file that
the index cannot read safely (a repeated id, a torn or damaged line, a line whose id is not
where the scan found it) is read whole through the run store, whose rules then decide.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.files import line_reader

# A record's top-level ``"id"`` key: records are canonical JSON (sorted keys, no blanks), and
# inside a JSON string every quote is escaped, so ``,"id":"`` only occurs as a key (the first
# one met: no object before it in sorted order holds an "id"; a wrong guess is caught when the
# line is parsed, and the file is then read whole).


def read_raw_items(path: Path) -> dict[str, dict[str, Any]]:
    """Every item of ``items.jsonl`` as its JSON object, in file order (id → object)."""
    file = path / "items.jsonl"
    if not file.is_file():
        raise MedlensError(f"{path}: run has no items.jsonl")
    whole = file.read_bytes()
    read = line_reader(whole)
    out: dict[str, dict[str, Any]] = {}
    for number, line in enumerate(whole.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = read(line)
            out[str(value["id"])] = value
        except (ValueError, KeyError, TypeError) as exc:
            problem = f"missing field {exc}" if isinstance(exc, KeyError) else exc
            raise MedlensError(f"{file}, line {number}: not an item ({problem})") from None
    return out


class LazyItems(Mapping[str, Item]):
    """Item id → ``Item``, built from its JSON object on first access."""

    def __init__(self, raw: Mapping[str, dict[str, Any]]) -> None:
        self.raw = raw
        self._built: dict[str, Item] = {}

    def __getitem__(self, item_id: str) -> Item:
        item = self._built.get(item_id)
        if item is None:
            item = self._built[item_id] = Item.from_json(self.raw[item_id])
        return item

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.raw


class LazyRecords(Mapping[str, Record]):
    """Item id → its record, parsed from its line of ``records.jsonl`` on first access."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._whole = b""
        self._spans: dict[str, tuple[int, int]] | None = None
        self._parsed: dict[str, Record] = {}
        self._all: dict[str, Record] | None = None
        file = run_dir / "records.jsonl"
        if file.is_file():
            self._whole = file.read_bytes()
            self._spans = _line_spans(self._whole)
        if self._spans is None:
            self._read_whole()

    def __getitem__(self, item_id: str) -> Record:
        if self._all is not None:
            return self._all[item_id]
        assert self._spans is not None
        found = self._parsed.get(item_id)
        if found is not None:
            return found
        start, end = self._spans[item_id]
        record = line_reader(b"")(self._whole[start:end])
        if not isinstance(record, dict) or record.get("id") != item_id:
            return self._read_whole()[item_id]
        self._parsed[item_id] = record
        return record

    def _read_whole(self) -> dict[str, Record]:
        from medlens.runs.store import RunStore

        if self._all is None:
            self._all = dict(RunStore.open(self.run_dir).records())
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self._all if self._all is not None else self._spans or {})

    def __len__(self) -> int:
        return len(self._all if self._all is not None else self._spans or {})

    def __contains__(self, item_id: object) -> bool:
        return item_id in (self._all if self._all is not None else self._spans or {})

    def every(self) -> dict[str, Record]:
        """Every record, parsed (the text filter reads them all once)."""
        if self._all is None:
            assert self._spans is not None
            read, whole, out = line_reader(self._whole), self._whole, {}
            for item_id, (start, end) in self._spans.items():
                record = self._parsed.get(item_id) or read(whole[start:end])
                if not isinstance(record, dict) or record.get("id") != item_id:
                    return self._read_whole()
                out[item_id] = record
            self._all = out  # the bytes stay: a page may be reading a line of them now
        return self._all


def _line_spans(whole: bytes) -> dict[str, tuple[int, int]] | None:
    """Item id → (start, end) of its line; None when the file needs the store's rules (a torn
    last line, a line without an id where the scan looks for it, an id with an escape, an id on
    two lines)."""
    if whole and not whole.endswith(b"\n"):
        return None
    spans: dict[str, tuple[int, int]] = {}
    start, size = 0, len(whole)
    find, index = whole.find, whole.index
    while start < size:
        end = index(b"\n", start)
        key = find(b',"id":"', start, end) + 7
        if key == 6:  # not found: the id may be the first key
            key = start + 7 if whole.startswith(b'{"id":"', start) else -1
        close = find(b'"', key, end) if key > 0 else -1
        if close < 0 or whole.find(b"\\", key, close) >= 0:
            return None
        item_id = whole[key:close].decode("utf-8", "surrogateescape")
        if item_id in spans:
            return None
        spans[item_id] = (start, end)
        start = end + 1
    return spans
