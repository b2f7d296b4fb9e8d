"""The seed papers' main tables over the board's runs (``board --layout medcmr|mmbu|gmai``).

A layout reads the items' axes and kinds (``analysis.paper_columns``), never the loader's name,
so a Med-CMR-shaped ``jsonl:`` file or a subset gets the same table. Imports ``board``'s
modules below it and ``analysis`` and below.
"""

from __future__ import annotations

from typing import Any

from medlens.analysis.paper_columns import LAYOUT_NAMES, REQUIRED_AXES, missing_axes
from medlens.board.align import Aligned
from medlens.board.layouts.common import LayoutContext
from medlens.core.errors import SpecError

__all__ = ["LAYOUT_NAMES", "LayoutContext", "build_layout", "check_layout"]


def check_layout(name: str, aligned: Aligned) -> None:
    """Refuse a layout whose axes the runs' items lack (one line naming run and axes)."""
    if name not in LAYOUT_NAMES:
        raise SpecError(f"--layout {name!r}: unknown layout (use {', '.join(LAYOUT_NAMES)})")
    missing = missing_axes(name, set(aligned.meta))
    if missing:
        run = aligned.runs[0].path
        needed = ", ".join(REQUIRED_AXES[name])
        raise SpecError(
            f"{run}: --layout {name} needs the axes {needed}; the items have no "
            f"{', '.join(missing)} (axes: {', '.join(sorted(k for k in aligned.meta if k != 'image_id'))})"
        )


def build_layout(name: str, aligned: Aligned, context: LayoutContext, min_n: int) -> dict[str, Any]:
    """The ``"layout"`` object of the board JSON (see docs/decisions/0018-judged-scores-in-every-table-paper-layouts.md)."""
    check_layout(name, aligned)
    if name == "medcmr":
        from medlens.board.layouts.medcmr import medcmr_layout

        return medcmr_layout(aligned, context)
    if name == "mmbu":
        from medlens.board.layouts.mmbu import mmbu_layout

        return mmbu_layout(aligned, context)
    from medlens.board.layouts.gmai import gmai_layout

    return gmai_layout(aligned, context, min_n)
