"""The run directory: run.json (first), items.jsonl, append-only records.jsonl, derived results.json."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import RunMismatchError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.core.version import __version__
from medlens.runs.files import JsonLines, canonical_json, write_atomic
from medlens.runs.layout import ITEMS_FILE, RECORDS_FILE, RUN_FILE, is_run
from medlens.runs.reading import describe_difference, read_items, read_records, read_run_file
from medlens.sources.sidecar import with_compact_design

if TYPE_CHECKING:
    from medlens.runs.view import RunView

SCHEMA_VERSION = 1
# Item errors that a retry cannot fix (an undecodable image, a missing file): resume skips them
# unless asked to retry errors.
PERMANENT_ERRORS = frozenset({"input", "image"})


def spec_hash(spec: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()


RECORD_BATCH = 256
"""Records written per batch at most; a batch also goes out once `RECORD_INTERVAL` seconds have
passed since the last one, so a slow model's answers are written as they come."""
RECORD_INTERVAL = 0.25


class RunStore:
    """One run directory. Records are appended in batches (one write and flush per batch, at
    least every quarter second, and at :meth:`flush` and :meth:`close`)."""

    def __init__(self, path: Path, run: dict[str, Any]) -> None:
        self.path = path
        self.run = run
        self._records: dict[str, Record] = {}
        self._log = JsonLines(path / RECORDS_FILE, batch=RECORD_BATCH, interval=RECORD_INTERVAL)
        self._lines = 0
        self._items: list[Item] | None = None
        self.damaged: list[str] = []
        """One message per line of records.jsonl that is not a record (file and line number)."""

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(cls, path: Path | str, resume: bool = False) -> RunStore:
        """Open an existing run; with `resume`, compact records.jsonl for appending."""
        path = Path(path)
        store = cls(path, read_run_file(path))
        store._load_records(compact=resume)
        return store

    @classmethod
    def open_or_create(cls, path: Path, spec: Mapping[str, Any], items: Iterable[Item]) -> RunStore:
        """Resume the run at `path` if its spec matches, else create it; refuse to mix specs."""
        if is_run(path):
            check_same_spec(path, spec)  # before compaction: a refused run changes nothing
            store = cls.open(path, resume=True)
            if not (path / ITEMS_FILE).is_file():
                store._write_items(items)
            return store
        return cls._create(path, spec, items)

    @classmethod
    def _create(cls, path: Path, spec: Mapping[str, Any], items: Iterable[Item]) -> RunStore:
        from datetime import datetime, timezone

        path.mkdir(parents=True, exist_ok=True)
        run = {
            "schema": SCHEMA_VERSION,
            "medlens_version": __version__,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "spec": dict(spec),
            "spec_hash": spec_hash(spec),
        }
        write_atomic(path / RUN_FILE, json.dumps(run, indent=2, ensure_ascii=False) + "\n")
        store = cls(path, run)
        store._write_items(items)
        return store

    def _write_items(self, items: Iterable[Item]) -> None:
        kept = list(items)
        encode = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps's bytes, one encoder
        lines = (encode(item.to_json()) for item in kept)
        write_atomic(self.path / ITEMS_FILE, "".join(line + "\n" for line in lines))
        self._items = kept  # what the file now holds: results need not parse it again

    # -- records -----------------------------------------------------------------------------
    def _load_records(self, compact: bool) -> None:
        """Read records.jsonl by the store's rules (``runs.reading``); every line that is not a
        record is listed in `self.damaged`.

        With `compact` (resuming, under the run lock), the file is rewritten without damaged
        lines and duplicates, keeping each item's latest record: an answer over an error, and an
        errored item's last error (its type and message stay reportable while it is retried).
        """
        found = read_records(self.path)
        self.damaged.extend(found.damaged)
        self._records = found.latest
        self._lines = found.lines
        if compact and found.dirty:
            self.compact()

    def records(self) -> dict[str, Record]:
        """Latest record per item id (errored ones included while the run is open)."""
        return self._records

    def done_ids(self, retry_errors: bool = False) -> set[str]:
        """Items not to run again: answered ones, and those whose error is permanent (bad
        input: retrying gives the same error) unless `retry_errors`."""
        return {
            rid
            for rid, record in self._records.items()
            if record.get("error") is None
            or (not retry_errors and record["error"].get("type") in PERMANENT_ERRORS)
        }

    def append(self, record: Record) -> None:
        self._log.append(record)
        self._lines += 1
        self._records[record["id"]] = record

    def flush(self) -> None:
        """Write the records still waiting for their batch (a checkpoint)."""
        self._log.flush()

    def compact(self) -> None:
        """Rewrite records.jsonl with each item's latest record once (call under the run lock)."""
        self._log.rewrite(self._records.values())
        self._lines = len(self._records)

    def compact_if_needed(self) -> None:
        """Compact when retried items left more than one line for some item."""
        if self._lines != len(self._records):
            self.compact()

    def close(self) -> None:
        self._log.close()

    # -- items -------------------------------------------------------------------------------
    def items(self) -> list[Item]:
        if self._items is not None:
            return list(self._items)
        return read_items(self.path)

    def save_run(self) -> None:
        """Rewrite run.json with what :attr:`run` holds now (atomically; fields outside the
        spec, such as the environment or the cache checks, change after creation)."""
        write_atomic(
            self.path / RUN_FILE, json.dumps(self.run, indent=2, ensure_ascii=False) + "\n"
        )

    def view(self) -> RunView:
        """The run read-only, as this store holds it (nothing is read again)."""
        from medlens.runs.reading import RecordsRead
        from medlens.runs.view import RunView

        held = RecordsRead(self._records, list(self.damaged), self._lines, False)
        return RunView(self.path, run=self.run, items=self._items, records=held)


def check_same_spec(path: Path, spec: Mapping[str, Any]) -> None:
    """Raise RunMismatchError when the run at `path` (if any) was made with another spec.

    Reads run.json only, so a refused rerun leaves the directory byte for byte as it was.
    """
    if not is_run(path):
        return
    run = read_run_file(path)
    if (
        run.get("spec_hash") != spec_hash(spec)
        and not same_items_elsewhere(run["spec"], spec)
        and spec_hash(with_compact_design(run["spec"])) != spec_hash(spec)
    ):
        from medlens.core.fingerprint import older_hash_note

        raise RunMismatchError(
            f"{path} holds a run with a different spec "
            f"({describe_difference(run['spec'], spec)}); use another --name or delete the directory"
            f"{older_hash_note(run['spec'].get('benchmark') or {}, spec.get('benchmark') or {})}"
        )


BENCHMARK_LOCATION = ("name", "spec", "description")
"""Keys of a spec's benchmark that say where the items were read from, not what they are."""


def same_items_elsewhere(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """True when two specs differ only in where the benchmark was read from: the same items
    (content hash, count, split, axes) through another loader or folder, e.g. ``vqa-rad:DIR``
    and ``hfds:REPO`` of the same release, or a data folder that moved. Such a run resumes."""
    rest_old = {k: v for k, v in old.items() if k != "benchmark"}
    rest_new = {k: v for k, v in new.items() if k != "benchmark"}
    bench_old, bench_new = old.get("benchmark"), new.get("benchmark")
    if (
        rest_old != rest_new
        or not isinstance(bench_old, Mapping)
        or not isinstance(bench_new, Mapping)
    ):
        return False
    kept_old = {k: v for k, v in bench_old.items() if k not in BENCHMARK_LOCATION}
    kept_new = {k: v for k, v in bench_new.items() if k not in BENCHMARK_LOCATION}
    return bool(kept_old.get("content_hash")) and kept_old == kept_new
