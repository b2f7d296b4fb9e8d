"""Markdown building blocks: escaped text and pipe tables."""

from __future__ import annotations

import re
from collections.abc import Sequence

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#!~])")


def md_text(value: object) -> str:
    """Data as inert markdown text: one line, HTML entities escaped, markup characters escaped."""
    one_line = " ".join(str(value).split())
    return _MARKDOWN_SPECIAL.sub(r"\\\1", one_line.replace("&", "&amp;"))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], right_from: int = 1) -> str:
    """A markdown table; cells must already be escaped."""
    align = [":--" if i < right_from else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
