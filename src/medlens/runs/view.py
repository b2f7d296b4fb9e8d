"""One run directory, read-only: the one way every command outside the writers reads a run.

:class:`RunView` gives a run's recorded spec (``run.json``), its items, its records (each
item's latest record, by the store's rules in :mod:`medlens.runs.reading`), its judge stages
(:mod:`medlens.runs.judgements`), whether a writer holds it, and its derived files
(:mod:`medlens.runs.artifacts`). Each is read once per view, when first asked for.

Beside the exact readings stand faster paths that must give the same values (tested on hostile
records in ``tests/runs/test_view.py``): :meth:`RunView.record_columns` (a few fields of every
record, read by pyarrow where that provably reads as the store does) and
:meth:`RunView.record_index` (each record parsed when first asked for, from its byte range in
the file). Where a file is damaged, torn or odd they fall back to the exact reading.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.artifacts import RULES, Artifact, Basis, Fresh, Variant, basis_of
from medlens.runs.files import line_reader
from medlens.runs.judgements import JudgeStore, judge_dir, judge_names, read_judge
from medlens.runs.layout import has_records, items_file, records_file

if TYPE_CHECKING:  # numpy: only where columns are read
    from medlens.runs.columns import Columns, Kind

from medlens.runs.reading import (
    RecordsRead,
    read_items,
    read_raw_items,
    read_records,
    read_run_file,
)


@dataclass(frozen=True)
class Saved:
    """A derived file's place and state."""

    path: Path
    basis: Basis
    """What it would be built from now."""
    exists: bool
    """Whether a readable file is saved there (fresh or not)."""
    reason: str | None
    """Why the saved file is stale (None: fresh, or none saved)."""
    fresh: Fresh | None


class RunView:
    """A run directory, read-only: nothing here writes into it but the derived files it builds
    (:meth:`derived`)."""

    def __init__(
        self,
        path: Path | str,
        *,
        run: dict[str, Any] | None = None,
        items: list[Item] | None = None,
        records: RecordsRead | None = None,
    ) -> None:
        """`run`, `items` and `records`: what a writer that just wrote them still holds (they
        are then not read again)."""
        self.path = Path(path)
        self._run = run
        self._items = items
        self._records = records

    @property
    def name(self) -> str:
        return self.path.name

    # -- run.json ----------------------------------------------------------------------------
    @property
    def run(self) -> dict[str, Any]:
        """run.json (a MedlensError when the folder is no run)."""
        if self._run is None:
            self._run = read_run_file(self.path)
        return self._run

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self.run["spec"]
        return spec

    @property
    def extract(self) -> str:
        """The extraction mode the run was scored with."""
        return str(self.spec.get("extract") or "medlens")

    def being_written(self) -> str | None:
        """Who holds the run's write lock (None: nobody; its numbers no longer move)."""
        from medlens.runs.lock import lock_holder

        return lock_holder(self.path)

    # -- items -------------------------------------------------------------------------------
    def items(self) -> list[Item]:
        """The run's items, in file order (a new list each time)."""
        if self._items is None:
            self._items = read_items(self.path)
        return list(self._items)

    def items_sha256(self) -> str:
        """sha256 of items.jsonl ("" when the run has none): runs on the same items share it."""
        file = items_file(self.path)
        return _file_sha256(file) if file.is_file() else ""

    def raw_items(self) -> dict[str, dict[str, Any]]:
        """Item id → its JSON object as items.jsonl holds it (no Item built)."""
        return read_raw_items(self.path)

    # -- records -----------------------------------------------------------------------------
    def _read(self) -> RecordsRead:
        if self._records is None:
            self._records = read_records(self.path)
        return self._records

    def records(self) -> dict[str, Record]:
        """Each item's latest record (errored ones included), in the order items first appear."""
        return self._read().latest

    @property
    def damaged(self) -> list[str]:
        """One message per line of records.jsonl that is not a record (the torn last line too)."""
        return self._read().damaged

    def has_records(self) -> bool:
        return has_records(self.path)

    def record_columns(self, fields: Mapping[str, Kind]) -> Columns:
        """Fields of every record as columns, keyed by item id (``runs.columns``): read by
        pyarrow when that reads as the store does, else from :meth:`records`."""
        from medlens.runs.columns import exact_columns, fast_columns

        if self._records is None and has_records(self.path):
            found = fast_columns(records_file(self.path).read_bytes(), "id", fields)
            if found is not None:
                return found
        return exact_columns(self.records().values(), "id", fields)

    def records_mention(self, needle: bytes) -> bool:
        """Whether records.jsonl's bytes hold `needle` (a memchr-speed scan of the mapped file,
        so runs without, say, a cached answer skip parsing their records)."""
        import mmap

        if not self.has_records():
            return False
        with records_file(self.path).open("rb") as handle:
            if handle.seek(0, 2) == 0:
                return False
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return data.find(needle) != -1

    def record_index(self) -> RecordIndex:
        """Item id → record, each parsed when first asked for (the viewer's pages)."""
        return RecordIndex(self)

    def records_sha256(self) -> str:
        """sha256 of records.jsonl (what an item bank was fitted on)."""
        return _file_sha256(records_file(self.path))

    # -- judges ------------------------------------------------------------------------------
    def judge_names(self) -> list[str]:
        """The run's judge stages (panels by their own name; members not listed)."""
        return judge_names(self.path)

    def judge(self, name: str) -> dict[str, Any]:
        """Judge stage `name`'s judge.json (a missing judge names the ones the run has)."""
        return read_judge(self.path, name)

    def judgements(self, name: str) -> JudgeStore:
        """Judge stage `name` opened read-only: each (item, repeat)'s latest line."""
        return JudgeStore.open(judge_dir(self.path, name))

    def judge_folder(self, name: str) -> Path:
        return judge_dir(self.path, name)

    # -- derived files -----------------------------------------------------------------------
    def variant(self, score_source: str = RULES, extract: str | None = None) -> Variant:
        """A variant of the run's derived files (its own extraction mode unless told)."""
        return Variant(extract or self.extract, score_source)

    def saved(self, artifact: Artifact, variant: Variant | None = None) -> Saved:
        """Where `artifact` lies for `variant`, its stamp if saved, and whether it is fresh."""
        variant = variant or self.variant()
        path = artifact.place(self.path, self.extract, variant)
        stamped = artifact.stamped(path) if path.is_file() else None
        basis = basis_of(self.path, variant, stamped[0] if stamped else None, artifact.inputs)
        reason = None if stamped is None else basis.difference(stamped[0])
        fresh = Fresh(path, stamped[0], stamped[1]) if stamped and reason is None else None
        return Saved(path, basis, stamped is not None, reason, fresh)

    def stored(self, artifact: Artifact, variant: Variant | None = None) -> Any:
        """What reading a saved file's stamp gave besides (a JSON file's content), fresh or
        stale; None when none is saved. For facts a stale stamp cannot change (item counts)."""
        path = artifact.place(self.path, self.extract, variant or self.variant())
        stamped = artifact.stamped(path) if path.is_file() else None
        return None if stamped is None else stamped[1]

    def fresh(self, artifact: Artifact, variant: Variant | None = None) -> Fresh | None:
        """The saved file of `artifact` when it is fresh (nothing is built)."""
        return self.saved(artifact, variant).fresh

    def derived(
        self,
        artifact: Artifact,
        variant: Variant | None = None,
        note: Callable[[str], None] | None = None,
    ) -> Any:
        """`artifact`'s content for `variant`: read while fresh, else built (saying why a saved
        file went stale through `note`) and saved with what was built alongside it."""
        variant = variant or self.variant()
        saved = self.saved(artifact, variant)
        if saved.fresh is not None:
            return artifact.load(self, saved.path, saved.fresh.extra)
        if note is not None and saved.exists:
            note(f"{saved.path} is stale ({saved.reason}): rebuilt")
        built = artifact.build(self, variant)
        bases = {
            made: saved.basis
            if made is artifact
            else basis_of(self.path, variant, None, made.inputs)
            for made in built
        }
        self._save(built, bases, variant)
        return artifact.attach(built[artifact], saved.basis.stamp())

    def _save(
        self, built: Mapping[Artifact, Any], bases: Mapping[Artifact, Basis], variant: Variant
    ) -> None:
        """Write what was built (a run being written keeps it in memory only; so does a folder
        that cannot be written to)."""
        from medlens.runs.files import write_atomic
        from medlens.runs.lock import results_written

        if self.being_written() is not None:
            return
        try:
            with results_written(self.path):
                for made, content in built.items():
                    now = basis_of(self.path, variant, bases[made].stamp(), made.inputs)
                    if now.files != bases[made].files:
                        continue  # a writer changed an input meanwhile: this build is stale
                    path = made.place(self.path, self.extract, variant)
                    data = made.encode(content, bases[made].stamp())
                    path.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(path, data)
        except OSError:
            pass  # a read-only copy of a run: the results stay in memory


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class RecordIndex(Mapping[str, Record]):
    """Item id → its record, parsed from its line of records.jsonl on first access.

    Opening indexes the file: the byte range of each item's line. Every answer is the store's:
    a line that does not parse as the record its id promised makes the file read whole, and
    iterating or counting parses every line. A file the index cannot read
    safely (a repeated id, a torn or damaged line, an id with an escape, a line whose id is not
    where the scan found it) is read whole by the store's rules, which then decide.
    """

    def __init__(self, view: RunView) -> None:
        self.view = view
        self._whole = b""
        self._spans: dict[str, tuple[int, int]] | None = None
        self._parsed: dict[str, Record] = {}
        self._all: dict[str, Record] | None = None
        if view.has_records():
            self._whole = records_file(view.path).read_bytes()
            self._spans = _line_spans(self._whole)
        self._parse = line_reader(self._whole)  # one search for long digit runs, for every line
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
        try:
            record = self._parse(self._whole[start:end])
        except ValueError:
            return self._read_whole()[item_id]
        if not isinstance(record, dict) or record.get("id") != item_id:
            return self._read_whole()[item_id]
        self._parsed[item_id] = record
        return record

    def _read_whole(self) -> dict[str, Record]:
        if self._all is None:
            self._all = dict(self.view.records())
        return self._all

    def __iter__(self) -> Iterator[str]:
        return iter(self.every())

    def __len__(self) -> int:
        return len(self.every())

    def __contains__(self, item_id: object) -> bool:
        """True when the item has a record (its line is parsed: a damaged one is no record)."""
        if not isinstance(item_id, str):
            return False
        try:
            self[item_id]
        except KeyError:
            return False
        return True

    def every(self) -> dict[str, Record]:
        """Every record, parsed (the viewer's text filter reads them all once)."""
        if self._all is None:
            assert self._spans is not None
            out = {}
            for item_id in self._spans:
                try:
                    out[item_id] = self[item_id]
                except KeyError:
                    return self._read_whole()
                if self._all is not None:  # a line the index misread: the store read it all
                    return self._all
            self._all = out  # the bytes stay: a page may be reading a line of them now
        return self._all


def _line_spans(whole: bytes) -> dict[str, tuple[int, int]] | None:
    """Item id → (start, end) of its line; None when the file needs the store's rules (a torn
    last line, a line without an id where the scan looks for it, an id with an escape, an id on
    two lines, a blank line).

    A record's top-level ``"id"`` key: records are canonical JSON (sorted keys, no blanks), and
    inside a JSON string every quote is escaped, so ``,"id":"`` only occurs as a key (the first
    one met: no object before it in sorted order holds an "id"; a wrong guess is caught when the
    line is parsed, and the file is then read whole)."""
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
