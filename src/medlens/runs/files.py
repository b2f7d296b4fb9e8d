"""The files of a run directory: canonical JSON, atomic writes, and one append-only JSON-lines
primitive that serves the run's records, its judges' judgements and its human ratings.

:class:`JsonLines` reads a file line by line, telling damaged lines and a torn last line (a kill
mid-write) apart from values; appends whole lines, flushed; and rewrites the file atomically
(compaction). What counts as a value, which line wins for a key and how damage is reported are
the stores' own rules (``RunStore``, ``JudgeStore``, ratings imports); the file handling is here.

Lines are encoded by orjson and decoded by it, byte for byte what the standard ``json`` module
writes with sorted keys, compact separators and ``ensure_ascii=False`` (:func:`canonical_bytes`
says how); appends can be batched (one write and one flush per batch), so a fast writer pays
one system call per batch instead of one per line, and a kill loses at most the batch in flight.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import secrets
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from medlens.core.errors import StorageError

_ORJSON_OPTIONS = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)
"""Sorted keys; dataclasses, datetimes and subclasses of built-in types go to ``_refuse``, so
they take the standard encoder's path (which refuses or converts them its own way)."""


class _NotFinite(Exception):
    """A NaN or an infinity: orjson writes ``null``, the standard encoder ``NaN``."""


def _refuse(value: Any) -> Any:
    raise TypeError(f"{type(value).__name__} is left to the standard encoder")


def _python_float(value: float) -> Any:
    """`value`, or its ``repr`` as a pre-encoded fragment where orjson's text would differ.

    ``repr`` (what ``json`` writes) uses an exponent below 1e-4 and from 1e16 on; orjson writes
    ``1e-5`` or ``0.00001`` for 1e-05 and ``1e16`` for 1e+16. In between both write the shortest
    round-trip digits alike (tests/runs/test_fast_json.py checks random and edge values).
    """
    if value - value:  # NaN or ±inf
        raise _NotFinite
    if value and not 1e-4 <= abs(value) < 1e16:
        return orjson.Fragment(repr(value))
    return value


def _with_python_floats(value: Any) -> Any:
    """`value` with every float that orjson would spell differently replaced by its ``repr``
    (containers are copied only on the path to such a float; plain values come back as is).

    Leaves are tested inline, not by a call each: this walk runs once per appended line.
    """
    kind = type(value)
    if kind is float:
        return _python_float(value)
    if kind is not dict and kind is not list and kind is not tuple:
        return value
    changed: Any = None
    pairs = value.items() if kind is dict else enumerate(value)
    for key, item in pairs:
        of = type(item)
        if of is float:
            if item - item:
                raise _NotFinite
            if not item or 1e-4 <= abs(item) < 1e16:
                continue
            kept = orjson.Fragment(repr(item))
        elif of is dict or of is list or of is tuple:
            kept = _with_python_floats(item)
            if kept is item:
                continue
        else:
            continue
        if changed is None:
            changed = dict(value) if kind is dict else list(value)
        changed[key] = kept
    return value if changed is None else changed


def canonical_bytes(value: Any, float_free: Collection[str] = ()) -> bytes:
    """Canonical JSON of `value` as UTF-8: ``canonical_json(value).encode()``, about twice as fast.

    orjson writes the bytes the standard encoder writes except for float text (``repr``'s is
    put in where the two differ) and NaN/infinity; values orjson refuses (non-string keys,
    integers beyond 64 bits, lone surrogates, other types) or that hold a NaN or an infinity
    are encoded by the standard encoder.

    `float_free`: keys of a dict `value` whose values the caller knows hold no float (a
    request's messages: strings only), so the walk that finds floats skips them.
    """
    try:
        if float_free and type(value) is dict:
            walked = {
                key: item if key in float_free else _with_python_floats(item)
                for key, item in value.items()
            }
        else:
            walked = _with_python_floats(value)
        return orjson.dumps(walked, default=_refuse, option=_ORJSON_OPTIONS)
    except (TypeError, _NotFinite):
        return canonical_json(value).encode("utf-8")


def canonical_json(value: Any) -> str:
    """Sorted keys, compact separators, ``ensure_ascii=False``: one text per value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


_LONG_NUMBER = re.compile(rb"[0-9]{19}")
"""19 digits in a row: maybe an integer beyond 64 bits, which orjson reads as a float."""
_DIGITS_TO_ZERO = bytes.maketrans(b"123456789", b"0" * 9)


def has_long_digit_run(whole: bytes) -> bool:
    """``_LONG_NUMBER.search(whole) is not None`` for a whole file, about ten times faster on a
    file without such a run (the regex steps through 16 MB of items.jsonl in 0.25 s): every
    digit becomes ``0`` (no other byte is one), then 19 zeros are looked for."""
    return b"0" * 19 in whole.translate(_DIGITS_TO_ZERO)


def loads_line(raw: bytes | str) -> Any:
    """One JSON value, parsed by orjson; what it refuses (NaN, lone surrogate escapes) or might
    read otherwise (integers beyond 64 bits) by the standard parser, so either reads what
    ``json`` wrote as ``json`` reads it."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if _LONG_NUMBER.search(data):
        return json.loads(raw)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(raw)


def line_reader(whole: bytes) -> Callable[[bytes], Any]:
    """A parser for the lines of `whole` (a file's bytes) that reads each as :func:`loads_line`
    does, with one search of the whole file for long digit runs instead of one per line (that
    search was a third of the cost of a parse)."""
    if has_long_digit_run(whole):
        return loads_line
    parse = orjson.loads

    def read(raw: bytes) -> Any:
        try:
            return parse(raw)
        except orjson.JSONDecodeError:
            return json.loads(raw)

    return read


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file so that readers see the old content or the new, never half of it.

    The new content goes to a hidden temporary file beside `path` (``.NAME.XXXXXXXX``), which
    is then renamed over it: a reader listing the folder meanwhile skips dot names
    (``runs.artifacts.judge_inputs``), as the temporary may be gone the next instant."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        descriptor, temporary = _new_temporary(path)
    except OSError as exc:
        raise StorageError(path, exc) from exc
    try:
        with open(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:  # a full disk: the old file stays whole, the temporary one goes
        temporary.unlink(missing_ok=True)
        raise StorageError(path, exc) from exc
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


_TEMPORARY_TRIES = 100


def _new_temporary(path: Path) -> tuple[int, Path]:
    """A new hidden file beside `path`, open for writing, with the mode a plain ``open()``
    gives (0666 less the umask, which the kernel applies).

    Not ``tempfile``'s: its files are 0600, and fixing their mode needs the umask, which can
    only be read by setting it, for the whole process: a thread writing meanwhile (a study's
    judge stages write side by side) made a 0666 file, and could leave the process at 0."""
    for _ in range(_TEMPORARY_TRIES):
        temporary = path.parent / f".{path.name}.{secrets.token_hex(4)}"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name beside it", str(path))


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
        return Line(number, loads_line(raw))
    except ValueError:
        return Line(number, None)


def _lines(parts: list[bytes], whole: bytes) -> list[Line]:
    """Every part as a :class:`Line` (numbered from 1), as :func:`_line` makes them, with one
    search of `whole` for long digit runs instead of one per line."""
    if has_long_digit_run(whole):
        return [_line(number, raw) for number, raw in enumerate(parts, start=1)]
    parse, out = orjson.loads, []
    for number, raw in enumerate(parts, start=1):
        try:
            out.append(Line(number, parse(raw)))
        except orjson.JSONDecodeError:
            out.append(_line(number, raw))
    return out


class JsonLines:
    """An append-only JSON-lines file (one JSON value per line).

    With `batch` > 1, appended lines wait in memory until `batch` of them are waiting or
    `interval` seconds have passed since the last write, then go out in one write and one
    flush (:meth:`flush` and :meth:`close` write them too). A slow writer (a model answering
    less often than every `interval`) thus still writes every line as it comes; a kill loses
    at most the waiting lines.
    """

    def __init__(self, path: Path, *, batch: int = 1, interval: float = 0.25) -> None:
        self.path = path
        self.batch = max(1, batch)
        self.interval = interval
        self._handle: IO[bytes] | None = None
        self._waiting: list[bytes] = []
        self._written_at = time.monotonic()

    def read(self) -> JsonlContent:
        """Every line, parsed; an absent file reads as empty."""
        if not self.path.is_file():
            return JsonlContent([], None)
        whole = self.path.read_bytes()
        parts = whole.split(b"\n")
        tail = parts.pop()  # text after the last newline ('' when the file ends cleanly)
        lines = _lines(parts, whole)
        return JsonlContent(lines, _line(len(parts) + 1, tail) if tail else None)

    def append(self, value: Any) -> None:
        """Append one line; written and flushed at once, or with its batch (the file stays
        open until :meth:`close`)."""
        self._waiting.append(canonical_bytes(value) + b"\n")
        if len(self._waiting) >= self.batch or time.monotonic() - self._written_at >= self.interval:
            self.flush()

    def flush(self) -> None:
        """Write and flush every waiting line (a checkpoint)."""
        self._written_at = time.monotonic()
        if not self._waiting:
            return
        data = b"".join(self._waiting)
        self._waiting.clear()  # a failed write may leave a torn last line: dropped on reopening
        try:
            if self._handle is None:
                self._handle = open(self.path, "ab")  # noqa: SIM115 - see close()
            self._handle.write(data)
            self._handle.flush()
        except OSError as exc:
            self._abandon_handle()
            raise StorageError(self.path, exc) from exc

    def _abandon_handle(self) -> None:
        """Close the file after a failed write without writing its buffer again."""
        handle, self._handle = self._handle, None
        if handle is not None:
            with contextlib.suppress(OSError):  # the same failure again: already reported
                handle.close()

    def append_synced(self, values: Iterable[Any]) -> None:
        """Append whole lines and fsync them; a torn last line is cut off first, so the first
        new line does not fuse with it."""
        text = b"".join(canonical_bytes(value) + b"\n" for value in values)
        if not text:
            return
        self.flush()
        try:
            if self.path.is_file():
                raw = self.path.read_bytes()
                if raw and not raw.endswith(b"\n"):
                    with open(self.path, "r+b") as torn:
                        torn.truncate(raw.rfind(b"\n") + 1)
            with open(self.path, "ab") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise StorageError(self.path, exc) from exc

    def rewrite(self, values: Iterable[Any]) -> None:
        """Replace the file atomically with these values, one per line (compaction)."""
        self._waiting.clear()  # the rewrite holds every value the store kept
        self.close()
        write_atomic(self.path, b"".join(canonical_bytes(value) + b"\n" for value in values))

    def close(self) -> None:
        """Write the waiting lines, then close the file."""
        self.flush()
        if self._handle is not None:
            self._handle.close()
            self._handle = None


class JsonLinesTail:
    """The JSON objects of the whole lines appended to a file since the last read (a torn last
    line waits; a damaged one is skipped): a study's driver follows a Ray worker's run with it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = path.stat().st_size if path.is_file() else 0

    def new_lines(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        with open(self.path, "rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        end = data.rfind(b"\n") + 1
        self.offset += end
        out = []
        for raw in data[:end].splitlines():
            with contextlib.suppress(ValueError):
                value = loads_line(raw)
                if isinstance(value, dict):
                    out.append(value)
        return out
