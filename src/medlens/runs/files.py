"""The files of a run directory: canonical JSON, atomic writes, and one append-only JSON-lines
primitive that serves the run's records, its judges' judgements and its human ratings.

:class:`JsonLines` reads a file line by line, telling damaged lines and a torn last line (a kill
mid-write) apart from values; appends whole lines, flushed; and rewrites the file atomically
(compaction). What counts as a value, which line wins for a key and how damage is reported are
the stores' own rules (``RunStore``, ``JudgeStore``, ratings imports); the file handling is here.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_atomic(path: Path, text: str) -> None:
    """Write a file so that readers see the old content or the new, never half of it."""
    handle = tempfile.NamedTemporaryFile(  # noqa: SIM115 - closed below, then renamed
        "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes the file 0600; give it the mode a plain open() would (shared run folders)
        os.chmod(handle.name, 0o666 & ~_umask())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@dataclass(frozen=True)
class Line:
    """One line of a JSON-lines file."""

    number: int
    """1-based line number."""
    value: Any
    """The parsed JSON value; None when the line is not JSON (or is blank)."""
    blank: bool = False


@dataclass(frozen=True)
class JsonlContent:
    lines: list[Line]
    """Every line that ends with a newline, in file order."""
    tail: Line | None
    """Text after the last newline (a write cut short), parsed when it happens to be whole."""


def _line(number: int, raw: bytes) -> Line:
    if not raw.strip():
        return Line(number, None, blank=True)
    try:
        return Line(number, json.loads(raw))
    except ValueError:
        return Line(number, None)


class JsonLines:
    """An append-only JSON-lines file (one JSON value per line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._handle: IO[str] | None = None

    def read(self) -> JsonlContent:
        """Every line, parsed; an absent file reads as empty."""
        if not self.path.is_file():
            return JsonlContent([], None)
        parts = self.path.read_bytes().split(b"\n")
        tail = parts.pop()  # text after the last newline ('' when the file ends cleanly)
        lines = [_line(number, raw) for number, raw in enumerate(parts, start=1)]
        return JsonlContent(lines, _line(len(parts) + 1, tail) if tail else None)

    def append(self, value: Any) -> None:
        """Append one line and flush it (the file stays open until :meth:`close`)."""
        if self._handle is None:
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - see close()
        self._handle.write(canonical_json(value) + "\n")
        self._handle.flush()

    def append_synced(self, values: Iterable[Any]) -> None:
        """Append whole lines and fsync them; a torn last line is cut off first, so the first
        new line does not fuse with it."""
        text = "".join(canonical_json(value) + "\n" for value in values)
        if not text:
            return
        if self.path.is_file():
            raw = self.path.read_bytes()
            if raw and not raw.endswith(b"\n"):
                with open(self.path, "r+b") as torn:
                    torn.truncate(raw.rfind(b"\n") + 1)
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    def rewrite(self, values: Iterable[Any]) -> None:
        """Replace the file atomically with these values, one per line (compaction)."""
        self.close()
        write_atomic(self.path, "".join(canonical_json(value) + "\n" for value in values))

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
