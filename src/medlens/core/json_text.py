"""The standard encoder's JSON text (``", "`` and ``": "`` between values) written by orjson.

items.jsonl holds ``json.dumps(item, ensure_ascii=False)`` per line, and a benchmark's content
hash is taken over the same with sorted keys; encoding every item twice was a tenth of
re-scoring a 26,000-row replay. orjson writes that text without the spaces, and in a text with
no backslash (no escaped character) every ``"`` opens or closes a string, so the pieces between
quotes alternate outside and inside strings; only the outside ones (``{``, ``":``, ``,"``,
``:[{``, numbers …) are spaced. A float, which the two encoders may spell apart (orjson writes
NaN as ``null``), shows as a number with ``.`` or an exponent, or as a ``null`` where the caller
expects none; such a text, a backslash, or a value orjson refuses (an integer beyond 64 bits, a
non-string key, a lone surrogate) is encoded by the standard encoder instead
(``tests/core/test_json_text.py`` compares both on real items and fuzzed values).
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_QUOTE = b'"'
_FLOAT = re.compile(rb"[0-9][.eE]")
_ENCODERS = {
    False: json.JSONEncoder(ensure_ascii=False).encode,
    True: json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode,
}


class _Spaced(dict[bytes, bytes]):
    """Outside-string pieces, spaced once each (a handful recur; numbers vary, so it is capped)."""

    def __missing__(self, piece: bytes) -> bytes:
        spaced = piece.replace(b",", b", ").replace(b":", b": ")
        if len(self) < 4096:
            self[piece] = spaced
        return spaced


_SPACED = _Spaced()


def standard_json(value: Any, *, sort_keys: bool = False, nulls: int = 0) -> bytes:
    """``json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode()``; `nulls` is how
    many None values `value` holds (a ``null`` more would be a NaN)."""
    try:
        compact = orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:
        compact = b"\\"  # refused: the standard encoder decides
    if b"\\" not in compact:
        pieces = compact.split(_QUOTE)
        outside = b"".join(pieces[::2])
        if not _FLOAT.search(outside) and outside.count(b"null") == nulls:
            pieces[::2] = map(_SPACED.__getitem__, pieces[::2])
            return _QUOTE.join(pieces)
    return _ENCODERS[sort_keys](value).encode("utf-8")
