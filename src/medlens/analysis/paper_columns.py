"""The columns of the seed papers' main tables, as item selections and metrics.

A column names the items it covers by their axes and kinds (never by the loader that read
them), so a Med-CMR-shaped ``jsonl:`` file or a subset has the same columns:

- ``medcmr``: ``SOD FDD SU TP CR LTG MSI`` — MCQ accuracy of the choice items of one
  ``dimension``; ``mcq_all`` — every choice item; ``open_all`` — the open items, scored by the
  rubric judge (0–100; a run scored by rules is marked so).
- ``mmbu``: ``{task}_{closed, open, delta}`` for the four perception tasks (``task`` axis:
  classification → ``unanchored``, box_classification → ``box_anchored``,
  mask_classification → ``mask_anchored``, detection); micro-F1 of the closed and open forms
  (``answer_type``), open classification judged by an equivalence judge, and Δ = closed − open
  paired on the same samples (``scoring.mmbu.paired_delta``).
- ``gmai``: ``overall`` — every item (GMAI-MMBench's leaderboard number).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from medlens.core.errors import SpecError

LAYOUT_NAMES = ("medcmr", "mmbu", "gmai")
MEDCMR_DIMENSIONS = ("SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI")
MMBU_TASKS = {
    "unanchored": "classification",
    "box_anchored": "box_classification",
    "mask_anchored": "mask_classification",
    "detection": "detection",
}
"""Column prefix → the ``task`` value of MMBU items (``sources/mmbu.py``)."""
MMBU_RANDOM = {
    "unanchored": 0.199,
    "box_anchored": 0.162,
    "mask_anchored": 0.183,
    "detection": 0.172,
}
"""The paper's Random row (closed forms only), as printed in its main table."""


@dataclass(frozen=True)
class PaperColumn:
    """One column of a paper's main table."""

    name: str
    where: tuple[tuple[str, str], ...]
    """Conditions on item axes (``kind`` is an axis: the item kind)."""
    metric: str
    """``accuracy`` (mean rule score), ``judged`` (a judge's score), ``micro_f1`` (MMBU),
    ``delta`` (closed − open, paired per sample)."""
    judged: bool = False
    """The paper's value comes from an LLM judge (the run needs one to be comparable)."""

    def matches(self, meta: Mapping[str, str]) -> bool:
        return all(meta.get(axis) == value for axis, value in self.where)


def medcmr_columns() -> list[PaperColumn]:
    columns = [
        PaperColumn(d, (("kind", "choice"), ("dimension", d)), "accuracy")
        for d in MEDCMR_DIMENSIONS
    ]
    columns.append(PaperColumn("mcq_all", (("kind", "choice"),), "accuracy"))
    columns.append(PaperColumn("open_all", (("kind", "open"),), "judged", judged=True))
    return columns


def mmbu_columns() -> list[PaperColumn]:
    columns = []
    for prefix, task in MMBU_TASKS.items():
        for form in ("closed", "open"):
            judged = form == "open" and task != "detection"  # open boxes are scored by IoU
            where = (("task", task), ("answer_type", form))
            columns.append(PaperColumn(f"{prefix}_{form}", where, "micro_f1", judged))
        columns.append(PaperColumn(f"{prefix}_delta", (("task", task),), "delta"))
    return columns


def gmai_columns() -> list[PaperColumn]:
    return [PaperColumn("overall", (), "accuracy")]


def layout_columns(layout: str) -> list[PaperColumn]:
    """The columns of one layout's main table."""
    builders = {"medcmr": medcmr_columns, "mmbu": mmbu_columns, "gmai": gmai_columns}
    if layout not in builders:
        raise SpecError(f"--layout {layout!r}: unknown layout (use {', '.join(LAYOUT_NAMES)})")
    return builders[layout]()


REQUIRED_AXES = {
    "medcmr": ("dimension",),
    "mmbu": ("task", "answer_type"),
    "gmai": ("granularity", "task", "department"),
}
"""The axes a run's items need for a layout (``kind`` every item has)."""


def missing_axes(layout: str, axes: set[str]) -> list[str]:
    return [axis for axis in REQUIRED_AXES[layout] if axis not in axes]


def layout_of_columns(columns: list[str]) -> str | None:
    """The layout whose columns include every one of `columns` (a user's reference table)."""
    for layout in LAYOUT_NAMES:
        if set(columns) <= {c.name for c in layout_columns(layout)}:
            return layout
    return None
