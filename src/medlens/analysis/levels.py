"""Levels: a run's scores down a chain of axes, parent → child (GMAI-MMBench's lexical tree).

``--by tree:l2-category`` names a tree level; :func:`checks.vocabulary.expand_levels` turns it
into its chain of levels present in the run (``category, l2-category``), and
:func:`level_rows` walks the cube of those axes depth first: each parent value's row, then the
rows of its children. ``slice`` and ``report`` both print these rows (one implementation), each
row with its n and its own 95% interval (the cube's cluster bootstrap, as every slice cell).
Plain comma-separated axes nest the same way (``--by modality,task``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medlens.analysis.slice_cells import Cell
from medlens.analysis.slices import SliceTable, cells_at, cube
from medlens.checks.vocabulary import TREE_PREFIX, expand_levels
from medlens.core.notation import split_list


@dataclass(frozen=True)
class LevelRow:
    """One row of the levels view: a value at some depth, and its cell."""

    depth: int
    axis: str
    value: str
    cell: Cell

    def to_json(self) -> dict[str, Any]:
        return {"depth": self.depth, "level": self.axis, "value": self.value, **self.cell.to_json()}


def level_axes(by: str, available: Sequence[str]) -> list[str]:
    """``--by`` text → the ordered levels (``tree:LEVEL`` expanded to its parents first)."""
    return expand_levels(split_list(by), available)


def asks_for_levels(by: str) -> bool:
    """Whether ``--by`` names a tree level (``tree:LEVEL``)."""
    return any(a.strip().startswith(TREE_PREFIX) for a in by.split(","))


def level_rows(cells: Sequence[Cell], levels: Sequence[str]) -> list[LevelRow]:
    """Depth-first rows over the cube's cells at each prefix of `levels`, values in order."""
    by_prefix = [cells_at(cells, levels[: depth + 1]) for depth in range(len(levels))]
    rows: list[LevelRow] = []

    def walk(depth: int, parent: tuple[tuple[str, str], ...]) -> None:
        if depth == len(levels):
            return
        children = [c for c in by_prefix[depth] if dict(c.key).items() >= dict(parent).items()]
        for cell in sorted(children, key=lambda c: dict(c.key)[levels[depth]]):
            value = dict(cell.key)[levels[depth]]
            rows.append(LevelRow(depth, levels[depth], value, cell))
            walk(depth + 1, (*parent, (levels[depth], value)))

    walk(0, ())
    return rows


def levels_of(table: SliceTable, by: str, min_n: int) -> tuple[list[str], list[LevelRow]]:
    """The levels ``--by`` names and their rows, from one cube of ``table``."""
    levels = level_axes(by, table.axes)
    return levels, level_rows(cube(table, levels, min_n=min_n), levels)
