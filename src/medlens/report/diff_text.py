"""A difference's confidence interval as report text (used by the report sections and the seed
protocols' rows)."""

from __future__ import annotations


def fmt_diff_ci(ci: list[float] | tuple[float, float] | None, scale: float = 1.0) -> str:
    """A difference's CI as ``+a…+b`` (× `scale`: 100 for points), "–" when there is none."""
    if not ci:
        return "–"
    digits = 1 if scale == 100 else 3
    return f"{scale * ci[0]:+.{digits}f}…{scale * ci[1]:+.{digits}f}"
