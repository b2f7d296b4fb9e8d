"""How every report writes a share, its interval and a cell's image count (owns the "12.3%",
"10.1–14.6" and "–" forms the text, markdown, HTML and board pages share)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def percent(value: float | None, digits: int = 1) -> str:
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def percent_ci(ci: tuple[float, float] | list[float] | None) -> str:
    return "–" if not ci else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"


def images_text(results: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """A cell's image count; "–" for a run without images (its clusters are single items)."""
    if results.get("counts", {}).get("items_with_images") == 0:
        return "–"
    return str(cell.get("images", "–"))
