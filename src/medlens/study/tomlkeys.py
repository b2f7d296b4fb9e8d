"""The line of each key in a TOML file, so that an error names the line a user must edit.

``tomllib`` gives values but no positions, and no well-kept TOML reader reports them (tomlkit
keeps a document model without line numbers), so this reads the lines itself, only far enough
to find where keys are written: table headers (``[a.b]``, ``[[boards]]`` with its index), keys
at the start of a line (dotted or quoted), the keys of a one-line inline table, and the lines
inside multi-line strings and arrays, which are skipped. The values themselves always come
from ``tomllib``; a key this reader cannot place falls back to the nearest enclosing key.
"""

from __future__ import annotations

import re

KeyPath = tuple[str | int, ...]

_BARE = r"[A-Za-z0-9_-]+"
_QUOTED = r'"(?:[^"\\]|\\.)*"|\'[^\']*\''
_KEY = rf"(?:{_BARE}|{_QUOTED})(?:\s*\.\s*(?:{_BARE}|{_QUOTED}))*"
_ASSIGN = re.compile(rf"\s*({_KEY})\s*=")
_HEADER = re.compile(rf"\s*(\[\[?)\s*({_KEY})\s*\]\]?")


def key_parts(text: str) -> list[str]:
    """``a."b.c".d`` → ``["a", "b.c", "d"]``."""
    parts = re.findall(rf"{_BARE}|{_QUOTED}", text)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def dotted(path: KeyPath) -> str:
    """How a message names the key: ``benchmarks.gmai.limit``, ``boards[2].pairs``."""
    text = ""
    for part in path:
        text += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class KeyLines:
    """Line numbers (1-based) of the keys of one TOML text."""

    def __init__(self, text: str) -> None:
        self.lines: dict[KeyPath, int] = {}
        self.tables: dict[int, KeyPath] = {}
        """The table each line belongs to (for a key tomllib names only by its line)."""
        self._scan(text.splitlines())

    def line_of(self, path: KeyPath) -> int:
        """The line of `path`, else of its nearest enclosing key found, else 1."""
        for end in range(len(path), 0, -1):
            if path[:end] in self.lines:
                return self.lines[path[:end]]
        return 1

    def key_at(self, number: int, text: str) -> str | None:
        """The dotted name of the key written on line `number` (whose text is `text`)."""
        header = _HEADER.match(text)
        if header and not _ASSIGN.match(text):
            return dotted(tuple(key_parts(header.group(2))))
        assign = _ASSIGN.match(text)
        if assign is None:
            return None
        return dotted((*self.tables.get(number, ()), *key_parts(assign.group(1))))

    def _scan(self, lines: list[str]) -> None:
        table: KeyPath = ()
        arrays: dict[KeyPath, int] = {}
        skip_until: str | None = None  # the closing quotes of a multi-line string
        depth = 0  # open brackets of a multi-line array
        for number, raw in enumerate(lines, start=1):
            line = raw
            self.tables[number] = table
            if skip_until is not None:
                if skip_until not in line:
                    continue
                line = line.split(skip_until, 1)[1]
                skip_until = None
            if depth > 0:
                depth += _bracket_balance(line)
                continue
            header = _HEADER.match(line)
            if header and not _ASSIGN.match(line):
                name: KeyPath = tuple(key_parts(header.group(2)))
                if header.group(1) == "[[":
                    arrays[name] = arrays.get(name, -1) + 1
                    table = (*name, arrays[name])
                else:
                    table = name
                self.lines.setdefault(table, number)
                continue
            assign = _ASSIGN.match(line)
            if not assign:
                continue
            path: KeyPath = (*table, *key_parts(assign.group(1)))
            self.lines.setdefault(path, number)
            value = line[assign.end() :]
            skip_until = _open_multiline_string(value)
            if skip_until is None:
                self._inline_keys(path, value, number)
                depth = max(0, _bracket_balance(value))

    def _inline_keys(self, path: KeyPath, value: str, number: int) -> None:
        """Keys of a one-line inline table ``{ spec = "…", limit = 5 }``."""
        stripped = value.strip()
        if not stripped.startswith("{"):
            return
        for found in re.finditer(rf"[{{,]\s*({_KEY})\s*=", _blank_strings(stripped)):
            self.lines.setdefault((*path, *key_parts(found.group(1))), number)


def _blank_strings(text: str) -> str:
    """`text` with the inside of quoted strings blanked, so their content is never a key."""
    return re.sub(
        _QUOTED, lambda m: m.group(0)[0] + " " * (len(m.group(0)) - 2) + m.group(0)[0], text
    )


def _open_multiline_string(value: str) -> str | None:
    """The delimiter of a multi-line string that opens on this line and does not close on it."""
    for quotes in ('"""', "'''"):
        if value.count(quotes) % 2 == 1:
            return quotes
    return None


def _bracket_balance(text: str) -> int:
    """Opened minus closed brackets outside strings and comments."""
    code = _blank_strings(text).split("#", 1)[0]
    return code.count("[") - code.count("]")
