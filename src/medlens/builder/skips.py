"""Labels the builder cannot turn into an item: skipped and counted per reason (the first rows
named), or refused at the first one under ``--strict``."""

from __future__ import annotations

from dataclasses import dataclass, field

from medlens.core.errors import InputError

SHOWN_ROWS = 5


class Unbuildable(InputError):
    """This label cannot become an item (not a malformed file: the build goes on without it)."""

    def __init__(self, path: object, where: str, problem: str, reason: str, row: str) -> None:
        super().__init__(path, where, problem)
        self.reason = reason
        """What is wrong, without the row's own numbers: the key skips are counted under."""
        self.row = row
        """``row 4``: where the label is."""


@dataclass
class SkipLog:
    """Skipped labels by reason, in the order first met."""

    rows: dict[str, list[str]] = field(default_factory=dict)

    def add(self, skipped: Unbuildable) -> None:
        self.rows.setdefault(skipped.reason, []).append(skipped.row)

    @property
    def count(self) -> int:
        return sum(len(rows) for rows in self.rows.values())

    def lines(self, total: int) -> list[str]:
        """``skipped 2 of 10 labels (--strict refuses instead):`` and one line per reason."""
        if not self.count:
            return []
        out = [f"skipped {self.count} of {total} labels (--strict refuses instead):"]
        for reason, rows in self.rows.items():
            numbers = [row.removeprefix("row ") for row in rows[:SHOWN_ROWS]]
            more = ", …" if len(rows) > SHOWN_ROWS else ""
            out.append(f"  {reason}: {len(rows)} (rows {', '.join(numbers)}{more})"
                       if len(rows) > 1 else f"  {reason}: 1 ({rows[0]})")  # fmt: skip
        return out
