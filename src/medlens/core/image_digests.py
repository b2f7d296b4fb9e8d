"""The sha256 of what a model is sent of each image, for a benchmark's content hash (issue 49).

A benchmark's content hash must change when an image does, whatever holds it: a file (or a
DICOM file), a base64 cell of a TSV, a cell of a parquet or Arrow table, a zip member, or bytes
inside an item. So each image is hashed by its encoded bytes as :meth:`ImageRef.read_bytes`
gives them (base64 decoded; the file's own bytes, never a re-encoding), read one image at a
time (a file in 1 MiB chunks), never the whole benchmark at once. The same bytes give the same
digest in every container, so the Hub copy of a release and its native folder keep one hash.

Reading every image of a large set takes seconds, so digests are kept in an SQLite file in the
user cache directory (``$MEDLENS_CACHE``), keyed by the file that holds the image (absolute
path, size, modification time in ns) and the image's place in it: a file whose size and time
are unchanged is taken to hold the bytes that were hashed (what make and rsync assume, and
medlens's derived results). Rows are looked up a folder at a time, so a benchmark of 100,000
image files costs 100,000 ``stat`` calls and a few queries when warm. A cache that cannot be
opened or written (a read-only home) only costs the time: digests are then computed each time.

A file modified in the last two seconds is hashed every time (a write within one clock tick
leaves size and time unchanged: git's "racy clean" rule). An image that cannot be read (a missing file, an empty TSV cell) hashes as ``unreadable``: its
item errors when asked, and the hash changes once the image is there.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medlens.core.cache_location import cache_dir
from medlens.core.errors import ItemError

if TYPE_CHECKING:
    from medlens.core.items import ImageRef

CACHE_FILE = "image-digests.sqlite"
UNREADABLE = "unreadable"
FLUSH_EVERY = 5_000
"""New digests written to the cache in batches of this many (a killed hash keeps most)."""
CHUNK = 1 << 20
RACY_NS = 2_000_000_000
"""A file modified this recently is hashed but its digest not kept: a write within the same
clock tick would leave size and time as they were (git's "racy clean" rule)."""

FileState = tuple[int, int]
"""(size, mtime_ns) of the file holding an image."""

_memo: dict[tuple[str, FileState], dict[str, str]] = {}
"""Digests known in this process, by file and state: a study describes one benchmark per model."""
_memo_lock = threading.Lock()
_file_locks: dict[str, threading.Lock] = {}
"""One lock per file: threads that hash one benchmark at once read it once."""


def _locator(image: ImageRef) -> str:
    """Where the image sits in its file ("" for a file that is one image)."""
    if image.source == "tsv":
        return f"{image.offset}:{image.length}"
    if image.source in ("parquet", "arrow", "volume"):  # volume: slice index and rendering
        return f"{image.offset}:{image.entry}"
    if image.source == "zip":
        return image.entry
    return ""


def bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_digest(image: ImageRef) -> str:
    """The digest of the image's bytes, read now."""
    try:
        if image.source in ("file", "dicom"):
            digest = hashlib.sha256()
            with open(image.path, "rb") as handle:
                while chunk := handle.read(CHUNK):
                    digest.update(chunk)
            return digest.hexdigest()
        return bytes_digest(image.read_bytes())
    except (OSError, ItemError):
        return UNREADABLE


@dataclass
class DigestCache:
    """Digests of one hashing pass: rows of the on-disk cache loaded a folder at a time (the
    cache is opened only when this process does not know a file yet), new digests written in
    batches. Use :func:`digest_cache` (it flushes and closes)."""

    db: sqlite3.Connection | None = None
    opened: bool = False
    known: dict[str, tuple[FileState, dict[str, str]]] = field(default_factory=dict)
    """Absolute path → (state the rows were stored for, locator → digest)."""
    folders: set[str] = field(default_factory=set)
    pending: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    seen: dict[tuple[str, str, int, str], str] = field(default_factory=dict)
    """This pass's digests by image (questions share images: one ``stat`` per image)."""

    def digest(self, image: ImageRef) -> str:
        """The sha256 of what the model is sent of `image` (:data:`UNREADABLE` if nothing)."""
        if image.source == "bytes":
            return bytes_digest(image.data)
        key = (image.source, image.path, image.offset, image.entry)
        found = self.seen.get(key)
        if found is None:
            found = self.seen[key] = self._file_digest(image)
        return found

    def _file_digest(self, image: ImageRef) -> str:
        path = os.path.abspath(image.path)
        try:
            info = os.stat(path)
        except OSError:
            return UNREADABLE
        state = (info.st_size, info.st_mtime_ns)
        locator = _locator(image)
        with _memo_lock:
            lock = _file_locks.get(path) or _file_locks.setdefault(path, threading.Lock())
        with lock:
            digests = self._digests_of(path, state)
            found = digests.get(locator)
            if found is None:
                found = _read_digest(image)
                if found != UNREADABLE and time.time_ns() - state[1] >= RACY_NS:
                    digests[locator] = found
                    self._store(path, state, locator, found)
        return found

    def _digests_of(self, path: str, state: FileState) -> dict[str, str]:
        """The digests known for the file in this state (the process's, then the cache's)."""
        with _memo_lock:
            memo = _memo.get((path, state))
        if memo is not None:
            return memo
        self._load_folder(os.path.dirname(path))
        stored_state, stored = self.known.get(path, (state, {}))
        digests = dict(stored) if stored_state == state else {}
        with _memo_lock:
            for key in [key for key in _memo if key[0] == path]:
                del _memo[key]  # an older state of the file
            return _memo.setdefault((path, state), digests)

    def _connection(self) -> sqlite3.Connection | None:
        if not self.opened:
            self.opened, self.db = True, _open_cache()
        return self.db

    def _load_folder(self, folder: str) -> None:
        db = self._connection()
        if db is None or folder in self.folders:
            return
        self.folders.add(folder)
        low, high = folder + os.sep, folder + chr(ord(os.sep) + 1)
        try:
            rows = db.execute(
                "SELECT path, size, mtime_ns, locator, digest FROM digests "
                "WHERE path >= ? AND path < ?",
                (low, high),
            ).fetchall()
        except sqlite3.Error:
            self.db = None
            return
        for path, size, mtime_ns, locator, digest in rows:
            state, digests = self.known.setdefault(path, ((size, mtime_ns), {}))
            if state == (size, mtime_ns):
                digests[locator] = digest

    def _store(self, path: str, state: FileState, locator: str, digest: str) -> None:
        self.pending.append((path, state[0], state[1], locator, digest))
        if len(self.pending) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Write the new digests, replacing the rows of older states of their files."""
        rows, self.pending = self.pending, []
        db = self._connection() if rows else None
        if db is None:
            return
        stale = {(path, size, mtime_ns) for path, size, mtime_ns, _, _ in rows}
        try:
            with db:
                db.executemany(
                    "DELETE FROM digests WHERE path = ? AND NOT (size = ? AND mtime_ns = ?)",
                    sorted(stale),
                )
                db.executemany("INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?)", rows)
        except sqlite3.Error:
            self.db = None  # a read-only or damaged cache: hash without it

    def close(self) -> None:
        self.flush()
        if self.db is not None:
            with suppress(sqlite3.Error):
                self.db.close()
            self.db = None


def _open_cache() -> sqlite3.Connection | None:
    try:
        folder = cache_dir()
        folder.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(folder / CACHE_FILE, timeout=30.0, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(
            "CREATE TABLE IF NOT EXISTS digests (path TEXT NOT NULL, size INTEGER NOT NULL, "
            "mtime_ns INTEGER NOT NULL, locator TEXT NOT NULL, digest TEXT NOT NULL, "
            "PRIMARY KEY (path, locator))"
        )
    except (OSError, sqlite3.Error):
        return None
    return db


@contextmanager
def digest_cache() -> Iterator[DigestCache]:
    """A :class:`DigestCache`; new digests are written when the block ends, even on an error
    (they are correct)."""
    cache = DigestCache()
    try:
        yield cache
    finally:
        cache.close()


def forget_process_digests() -> None:
    """Drop what this process remembers (tests that rewrite a file within one mtime tick)."""
    with _memo_lock:
        _memo.clear()
