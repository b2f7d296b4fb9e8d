"""HTML building blocks every page uses: escaping, JSON safe inside <script>, sortable tables."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from typing import Any

Row = Sequence[tuple[str, float | str | None]]
"""Table cells as (shown text, sort value or None)."""


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def safe_json(value: Any) -> str:
    """JSON that can sit inside a <script> element: no '<', '>', '&', U+2028 or U+2029 left."""
    text = json.dumps(value, ensure_ascii=False)
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(char, escape)
    return text


def table_html(
    headers: Sequence[str], rows: Sequence[Row], sortable: bool = True, text_columns: int = 1
) -> str:
    """A table; the first `text_columns` columns are left-aligned text."""
    head = "".join(
        f'<th class="text">{esc(h)}</th>' if i < text_columns else f"<th>{esc(h)}</th>"
        for i, h in enumerate(headers)
    )
    lines = []
    for row in rows:
        cells = []
        for i, (text, sort_value) in enumerate(row):
            attributes = ' class="text"' if i < text_columns else ""
            if sort_value is not None:
                attributes += f' data-v="{esc(sort_value)}"'
            cells.append(f"<td{attributes}>{esc(text)}</td>")
        lines.append("<tr>" + "".join(cells) + "</tr>")
    kind = ' class="sortable"' if sortable else ""
    thead = f"<thead><tr>{head}</tr></thead>" if any(headers) else ""
    return f"<table{kind}>{thead}<tbody>{''.join(lines)}</tbody></table>"
