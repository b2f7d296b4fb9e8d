"""A byte-level, streaming TSV scanner that reports where every cell lies in the file.

Written by hand because no library does both things the VLMEvalKit loader needs: Python's ``csv``
module decodes every byte of the multi-megabyte base64 image cells into ``str`` objects (too slow
and too much memory on an 800 MB file) and cannot say at which byte offset a cell starts, and
``pandas.read_csv`` holds the whole table in memory.

The file is memory-mapped and searched with ``find`` (memchr, C speed), so a long cell is skipped
without being copied; for it the scanner keeps only where it lies. Mapped pages behind the
current row are handed back to the kernel every :data:`RELEASE_BYTES`, so the memory the process
holds stays flat however large the file is. Mapping rather than reading in chunks means a row is
never split across two reads, so nearly every row is cut with two ``split`` calls (see
:meth:`TsvScanner._split_plain_row`).

Dialect (what VLMEvalKit's ``pandas.read_csv(sep="\\t")`` accepts): cells separated by tabs, rows
by ``\\n`` or ``\\r\\n``; a cell that starts with ``"`` is quoted and may contain tabs, newlines and
``""`` (an escaped quote); a UTF-8 byte-order mark at the start is skipped; empty lines are skipped.
"""

from __future__ import annotations

import mmap
import os
from typing import Literal, NamedTuple

from medlens.core.errors import InputError

TAB, NEWLINE, QUOTE, CR = b"\t", b"\n", b'"', b"\r"
TAB_QUOTE = TAB + QUOTE
BOM = b"\xef\xbb\xbf"
HEAD_WINDOW = 1 << 12
"""Bytes looked at to cut the cells before the spanned one with one ``split`` (else cell by cell)."""
RELEASE_BYTES = 1 << 24
"""Mapped bytes read past before they are handed back to the kernel."""

Terminator = Literal["tab", "newline", "eof"]


class Row(NamedTuple):
    """The cells of one row, as parallel lists (one object per row, not one per cell)."""

    values: list[bytes]
    """Each cell's content (quotes unescaped); ``b""`` for a spanned cell too long to keep."""
    lengths: list[int]
    """Bytes of each cell's content in the file (inside the quotes of a quoted cell, no ``\\r``)."""
    start: int
    """Absolute byte offset of the row."""
    offsets: list[int] | None = None
    """Absolute byte offset of each cell's content; ``None`` for a row cut by ``split`` (all its
    cells plain, so every offset follows from the lengths)."""

    def offset(self, column: int) -> int:
        """Absolute byte offset of a cell's content (after an opening quote)."""
        if self.offsets is not None:
            return self.offsets[column]
        return self.start + sum(self.lengths[:column]) + column  # plain cells, one tab apart


class TsvScanner:
    """Reads the rows of a TSV file one at a time; use it as a context manager."""

    def __init__(self, path: str) -> None:
        self._path = path
        try:
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                self._buf: mmap.mmap | bytes = (
                    mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
                )
        except OSError as exc:  # unreadable, or on a file system that cannot map files
            raise InputError(path, None, f"cannot read the file ({exc.strerror or exc})") from None
        self._pos = len(BOM) if self._buf[: len(BOM)] == BOM else 0
        self._released = 0
        """Mapped bytes before this offset have been handed back."""
        self.rows_read = 0
        """Rows returned so far, the header included."""
        self.names: tuple[str, ...] = ()
        """Column names used in error messages (set by the caller once the header is known)."""

    @property
    def position(self) -> int:
        """Byte offset just past the last row read (its line terminator included)."""
        return self._pos

    def __enter__(self) -> TsvScanner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if isinstance(self._buf, mmap.mmap):
            self._buf.close()

    def read_row(self, span: int | None = None, keep_limit: int = 64) -> Row | None:
        """The next non-empty row, or ``None`` at the end of the file.

        Column ``span`` keeps its text only when it is at most ``keep_limit`` bytes long; longer
        text is skipped, not copied.
        """
        if not self._skip_blank_lines():
            return None
        row = self._split_plain_row(span, keep_limit) or self._read_cells(span, keep_limit)
        self.rows_read += 1
        if self._pos - self._released >= RELEASE_BYTES:
            self._release_behind()
        return row

    def _split_plain_row(self, span: int | None, keep_limit: int) -> Row | None:
        """The row cut with one ``split`` on each side of column ``span``, or None if unusual.

        Calls per cell dominate on a file whose rows are a dozen short cells around one huge
        image; this path takes a row with no quoted cell (the common case) in a few calls, and
        returns ``None`` (changing nothing) for anything else, which :meth:`_read_cells` decides.
        """
        buf, pos = self._buf, self._pos
        end = buf.find(NEWLINE, pos)
        end = len(buf) if end < 0 else end
        content_end = end - 1 if buf[end - 1 : end] == CR else end
        values: list[bytes] = []
        lengths: list[int] = []
        start = pos  # where the cells after the spanned one begin (without one: the row)
        if span is not None:
            head = buf[pos : min(pos + HEAD_WINDOW, content_end)]
            *before, rest = head.split(TAB, span)
            cell = pos + len(head) - len(rest)
            if len(before) < span or _has_quoted_cell(buf[pos : cell + 1]):
                return None
            tab = buf.find(TAB, cell, content_end)
            cell_end = content_end if tab < 0 else tab
            values = [*before, buf[cell:cell_end] if cell_end - cell <= keep_limit else b""]
            lengths = [*map(len, before), cell_end - cell]
            start = content_end + 1 if tab < 0 else tab + 1
        tail = buf[start:content_end]
        if _has_quoted_cell(tail):
            return None
        if start <= content_end:
            cells = tail.split(TAB)
            values += cells
            lengths += map(len, cells)
        self._pos = end + 1
        return Row(values, lengths, pos)

    def _read_cells(self, span: int | None, keep_limit: int) -> Row:
        """The row read cell by cell: quoted cells, and every case the split path leaves."""
        offsets: list[int] = []
        row = Row([], [], self._pos, offsets)
        while True:
            column = len(row.values)
            quoted = self._buf[self._pos : self._pos + 1] == QUOTE
            if quoted:
                offset, length, terminator = self._read_quoted(column)
            else:
                offset, length, terminator = self._read_plain()
            value = b""
            if column != span or length <= keep_limit:
                value = self._buf[offset : offset + length]
                value = value.replace(QUOTE + QUOTE, QUOTE) if quoted else value
            row.values.append(value)
            row.lengths.append(length)
            offsets.append(offset)
            if terminator != "tab":
                return row

    def _read_plain(self) -> tuple[int, int, Terminator]:
        buf, start = self._buf, self._pos
        tab = buf.find(TAB, start)
        newline = buf.find(NEWLINE, start, len(buf) if tab < 0 else tab)
        terminator: Terminator
        if newline >= 0:
            end, terminator = newline, "newline"
        elif tab >= 0:
            end, terminator = tab, "tab"
        else:
            end, terminator = len(buf), "eof"
        content_end = end - 1 if terminator != "tab" and buf[end - 1 : end] == CR else end
        self._pos = end + 1
        return start, content_end - start, terminator

    def _read_quoted(self, column: int) -> tuple[int, int, Terminator]:
        buf = self._buf
        start = search = self._pos + 1
        while True:
            quote = buf.find(QUOTE, search)
            if quote < 0:
                self._fail(column, "quoted field is never closed (missing '\"'; truncated file?)")
            if buf[quote + 1 : quote + 2] != QUOTE:
                break
            search = quote + 2
        self._pos = quote + 1
        return start, quote - start, self._after_closing_quote(column)

    def _after_closing_quote(self, column: int) -> Terminator:
        """Consume the separator that must follow a closing quote."""
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

    def _skip_blank_lines(self) -> bool:
        """Move past empty lines; False when nothing but blank lines is left."""
        while self._pos < len(self._buf):
            if self._buf[self._pos : self._pos + 1] == NEWLINE:
                self._pos += 1
            elif self._buf[self._pos : self._pos + 2] == CR + NEWLINE:
                self._pos += 2
            else:
                return True
        return False

    def _release_behind(self) -> None:
        """Hand mapped pages before the current row back to the kernel (they count as ours)."""
        # Windows has no madvise (it trims a process's mapped pages itself).
        if isinstance(self._buf, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            upto = self._pos - self._pos % mmap.PAGESIZE
            self._buf.madvise(mmap.MADV_DONTNEED, self._released, upto - self._released)
            self._released = upto

    def _fail(self, column: int, problem: str) -> None:
        name = self.names[column] if column < len(self.names) else f"column {column + 1}"
        where = "header" if self.rows_read == 0 else f"row {self.rows_read}"
        raise InputError(self._path, f"{where}, field {name!r}", problem)


def _has_quoted_cell(cells: bytes) -> bool:
    """Whether a run of tab-separated cells has one that starts with a quote."""
    return cells[:1] == QUOTE or TAB_QUOTE in cells
