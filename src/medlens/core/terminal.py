"""The one sanitiser for text that reaches a terminal: model output, server messages, ids.

Model output (and anything copied from a file or a server) is untrusted. Printed raw, an escape
sequence in it can set the window title, write the clipboard (OSC 52), clear the screen or hide
text; a bidirectional-override character can make a line read differently from what it holds.
Every command that prints such text passes it through :func:`terminal_safe`, which shows each
control character escaped (``\\x1b``, ``\\u202e``) and keeps newlines and tabs;
:func:`terminal_safe_json` does the same inside JSON text, as JSON escapes (still valid JSON,
parsing to the same value).
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f"  # C0 but tab and newline, DEL, C1 (0x9b is a one-byte CSI)
    "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"  # bidirectional marks, embeddings, isolates
    "\u2028\u2029]"  # line and paragraph separators: a line break the reader does not see
)
_UNSAFE_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")
"""What JSON writes raw (it already escapes every C0 character)."""


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_safe(text: str) -> str:
    """`text` with every control, bidi and invisible line-break character shown escaped."""
    return _UNSAFE.sub(_escaped, text)


def terminal_safe_line(text: str) -> str:
    """:func:`terminal_safe` for one line: newlines and tabs escaped too."""
    return terminal_safe(text).replace("\n", "\\n").replace("\t", "\\t")


def terminal_safe_json(text: str) -> str:
    """JSON text (``ensure_ascii=False``) with the characters a terminal acts on as ``\\uXXXX``:
    the same JSON value, harmless on a terminal."""
    return _UNSAFE_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
