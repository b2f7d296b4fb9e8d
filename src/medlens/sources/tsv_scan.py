"""A byte-level, streaming TSV scanner that reports where every cell lies in the file.

Written by hand because no library does both things the VLMEvalKit loader needs: Python's ``csv``
module decodes every byte of the multi-megabyte base64 image cells into ``str`` objects (too slow
and too much memory on an 800 MB file) and cannot say at which byte offset a cell starts, and
``pandas.read_csv`` holds the whole table in memory. This scanner reads big chunks and finds
tabs, newlines and quotes with ``bytes.find`` (memchr, C speed), so long cells are skipped
without being copied; for them it keeps only ``(offset, length)``.

Dialect (what VLMEvalKit's ``pandas.read_csv(sep="\\t")`` accepts): cells separated by tabs, rows
by ``\\n`` or ``\\r\\n``; a cell that starts with ``"`` is quoted and may contain tabs, newlines and
``""`` (an escaped quote); a UTF-8 byte-order mark at the start is skipped; empty lines are skipped.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import BinaryIO, Literal, NamedTuple

from medlens.errors import InputError

TAB, NEWLINE, QUOTE, CR = b"\t", b"\n", b'"', b"\r"
BOM = b"\xef\xbb\xbf"
CHUNK_SIZE = 1 << 20
SHORT_WINDOW = 1 << 12
"""Bytes looked at to split a row's run of short cells in one call (longer runs go cell by cell)."""

Terminator = Literal["tab", "newline", "eof"]


class Cell(NamedTuple):
    """One cell of a row: where its text lies in the file, and the text when it was kept.

    A ``NamedTuple`` rather than a frozen dataclass: a row has a dozen or more cells, and one is
    built in half the time (on a GMAI file the difference is about 7% of indexing it).
    """

    offset: int
    """Absolute byte offset of the cell's content (after an opening quote)."""
    length: int
    """Bytes of content in the file (between the quotes for a quoted cell, without ``\\r``)."""
    value: bytes | None
    """The content (quotes unescaped), or ``None`` for a spanned cell longer than the keep limit."""


class TsvScanner:
    """Reads rows one at a time; never holds more than one chunk plus the kept cells of a row."""

    def __init__(self, handle: BinaryIO, path: str, chunk_size: int = CHUNK_SIZE) -> None:
        self._handle = handle
        self._path = path
        self._chunk_size = chunk_size
        self._buf = b""
        self._base = 0
        """Absolute file offset of ``_buf[0]``."""
        self._pos = 0
        self._eof = False
        self.rows_read = 0
        """Rows returned so far, the header included."""
        self.names: Sequence[str] = ()
        """Column names used in error messages (set by the caller once the header is known)."""
        while len(self._buf) < len(BOM) and self._fill(0):
            pass
        if self._buf.startswith(BOM):
            self._pos = len(BOM)

    def read_row(self, spanned: Collection[int] = (), keep_limit: int = 64) -> list[Cell] | None:
        """The next non-empty row, or ``None`` at the end of the file.

        Cells whose column number is in ``spanned`` keep their text only when it is at most
        ``keep_limit`` bytes long; their bytes are skipped, not copied.
        """
        if not self._skip_blank_lines():
            return None
        stops = sorted(spanned)
        cells: list[Cell] = []
        while True:
            column = len(cells)
            keep = column not in spanned
            terminator: Terminator | None = None
            if keep:
                stop = next((s for s in stops if s > column), None)
                terminator = self._split_short_cells(cells, stop)
            if terminator is None:
                cell, terminator = self._read_cell(keep, keep_limit, column)
                cells.append(cell)
            if terminator != "tab":
                self.rows_read += 1
                return cells

    def _split_short_cells(self, cells: list[Cell], stop: int | None) -> Terminator | None:
        """Append the cells up to column ``stop`` (or the end of the row) with one ``split``.

        The per-cell path costs a few Python calls per cell, which dominate on a file whose rows
        are a dozen short cells around one huge image. This path only takes runs that lie wholly
        in the buffer with no quoted cell and no newline inside; it returns ``None`` (and changes
        nothing) otherwise, so the per-cell path decides every unusual case.
        """
        buf, pos = self._buf, self._pos
        high = min(len(buf), pos + SHORT_WINDOW)
        if stop is None:
            end = buf.find(NEWLINE, pos, high)
            if end < 0:
                return None
            content_end = end - 1 if end > pos and buf[end - 1] == CR[0] else end
            region = buf[pos:content_end]
            parts = region.split(TAB)
            terminator: Terminator = "newline"
        else:
            count = stop - len(cells)
            parts = buf[pos:high].split(TAB, count)
            if len(parts) <= count:
                return None
            del parts[count]
            region = TAB.join(parts)
            end = pos + len(region)
            terminator = "tab"
            if NEWLINE in region:
                return None
        if region[:1] == QUOTE or TAB + QUOTE in region:
            return None
        offset = self._base + pos
        for part in parts:
            cells.append(Cell(offset, len(part), part))
            offset += len(part) + 1
        self._pos = end + 1
        return terminator

    def _fill(self, keep_from: int) -> bool:
        """Drop ``_buf[:keep_from]`` and append the next chunk; False at the end of the file."""
        chunk = self._handle.read(self._chunk_size)
        self._buf = self._buf[keep_from:] + chunk
        self._base += keep_from
        self._pos -= keep_from
        if not chunk:
            self._eof = True
        return bool(chunk)

    def _skip_blank_lines(self) -> bool:
        """Move past empty lines; False when nothing but blank lines is left."""
        while True:
            if self._pos >= len(self._buf) - 1 and not self._eof:
                self._fill(self._pos)
            if self._pos >= len(self._buf):
                return False
            if self._buf[self._pos : self._pos + 1] == NEWLINE:
                self._pos += 1
            elif self._buf[self._pos : self._pos + 2] == CR + NEWLINE:
                self._pos += 2
            else:
                return True

    def _read_cell(self, keep: bool, keep_limit: int, column: int) -> tuple[Cell, Terminator]:
        if self._pos >= len(self._buf) and not self._eof:
            self._fill(self._pos)
        if self._buf[self._pos : self._pos + 1] == QUOTE:
            return self._read_quoted(keep, keep_limit, column)
        return self._read_plain(keep, keep_limit)

    def _keep_from(self, start: int, keep: bool, keep_limit: int) -> int:
        """How much of the buffer may be dropped while a cell that began at ``start`` goes on.

        A last byte that is ``\\r`` (it may precede a ``\\n`` in the next chunk) or ``"`` (it may be
        the first of ``""``) is kept. Anything else is dropped with the rest, so that skipping a
        long cell reads each chunk into an empty buffer, which ``bytes`` concatenation returns
        without copying it.
        """
        if start < 0 or (not keep and len(self._buf) - start > keep_limit):
            tail = 1 if self._buf[-1:] in (CR, QUOTE) else 0
            return max(start, len(self._buf) - tail)
        return start

    def _read_plain(self, keep: bool, keep_limit: int) -> tuple[Cell, Terminator]:
        start_abs = self._base + self._pos
        search = self._pos
        dropped = False
        terminator: Terminator
        while True:
            tab = self._buf.find(TAB, search)
            limit = tab if tab >= 0 else len(self._buf)
            newline = self._buf.find(NEWLINE, search, limit)
            if newline >= 0:
                end, terminator = newline, "newline"
                break
            if tab >= 0:
                end, terminator = tab, "tab"
                break
            start = start_abs - self._base
            keep_from = self._keep_from(start, keep, keep_limit)
            dropped = dropped or keep_from > start
            search = len(self._buf) - keep_from
            if not self._fill(keep_from):
                end, terminator = len(self._buf), "eof"
                break
        if terminator != "tab" and end > 0 and self._buf[end - 1 : end] == CR:
            content_end = end - 1
        else:
            content_end = end
        length = self._base + content_end - start_abs
        skipped = dropped or (not keep and length > keep_limit)
        value = None if skipped else self._buf[start_abs - self._base : content_end]
        self._pos = end + 1
        return Cell(start_abs, length, value), terminator

    def _read_quoted(self, keep: bool, keep_limit: int, column: int) -> tuple[Cell, Terminator]:
        start_abs = self._base + self._pos + 1
        search = self._pos + 1
        dropped = False
        while True:
            quote = self._buf.find(QUOTE, search)
            if quote >= 0 and quote + 2 <= len(self._buf):
                if self._buf[quote + 1 : quote + 2] == QUOTE:
                    search = quote + 2
                    continue
                break
            if quote >= 0 and self._eof:
                break
            start = start_abs - self._base
            keep_from = self._keep_from(start, keep, keep_limit)
            dropped = dropped or keep_from > start
            search = (quote if quote >= 0 else len(self._buf)) - keep_from
            if not self._fill(keep_from) and quote < 0:
                self._fail(column, "quoted field is never closed (missing '\"'; truncated file?)")
        start = start_abs - self._base
        length = quote - start
        skipped = dropped or (not keep and length > keep_limit)
        value = None if skipped else self._buf[start:quote].replace(QUOTE + QUOTE, QUOTE)
        self._pos = quote + 1
        terminator = self._after_closing_quote(column)
        return Cell(start_abs, length, value), terminator

    def _after_closing_quote(self, column: int) -> Terminator:
        """Consume the separator that must follow a closing quote."""
        if self._pos + 2 > len(self._buf) and not self._eof:
            self._fill(self._pos)
        following = self._buf[self._pos : self._pos + 2]
        if not following:
            return "eof"
        if following[:1] in (TAB, NEWLINE):
            self._pos += 1
            return "tab" if following[:1] == TAB else "newline"
        if following == CR + NEWLINE:
            self._pos += 2
            return "newline"
        self._fail(column, "text after the closing quote of a quoted field")
        raise AssertionError  # unreachable: _fail raises

    def _fail(self, column: int, problem: str) -> None:
        name = self.names[column] if column < len(self.names) else f"column {column + 1}"
        where = "header" if self.rows_read == 0 else f"row {self.rows_read}"
        raise InputError(self._path, f"{where}, field {name!r}", problem)
