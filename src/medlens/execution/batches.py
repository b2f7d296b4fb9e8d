"""Runs that ask their items in batches chosen as they go (``medlens run --adaptive``): what a
planner of batches provides, and the loop that asks them.

Execution knows nothing of how a batch is chosen (``items.adaptive`` chooses from an item bank
and a baseline run): it asks the planner for the next batch given every record so far, asks
those items, and writes the planner's account of its design into run.json (outside the spec)
before each batch, so a run killed in a batch resumes with that batch. A batch whose items did
not all get an answer (errors) ends the run: the design needs every drawn item's answer, and a
rerun asks the missing ones first.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from medlens.core.items import Item
from medlens.core.records import Record


class BatchPlanner(Protocol):
    """Chooses an adaptive run's batches."""

    @property
    def spec(self) -> dict[str, Any]:
        """What the run spec records under ``adaptive`` (part of the spec hash: a rerun with
        another bank, baseline or groups is refused as another spec)."""

    def check(self, items: Sequence[Item], benchmark: Mapping[str, Any]) -> None:
        """Refuse items the planner cannot draw from (before anything is written)."""

    def total(self, n_items: int) -> int:
        """The most items the run may ask (for the progress bar)."""

    def next_batch(
        self, records: Mapping[str, Record], recorded: Mapping[str, Any] | None, size: int
    ) -> list[str]:
        """Ids of the next batch (the unfinished one first); empty when the run is done.
        `recorded` is run.json's ``adaptive`` entry (None in a new run)."""

    def design(self) -> dict[str, Any]:
        """run.json's ``adaptive`` entry after the last :meth:`next_batch`."""


def answered(record: Record | None) -> bool:
    """A record with a score and no error: the design can use it."""
    return record is not None and record.get("error") is None and record.get("score") is not None


async def ask_in_batches(
    planner: BatchPlanner,
    records: Callable[[], Mapping[str, Record]],
    items: Sequence[Item],
    ask: Callable[[list[Item]], Awaitable[None]],
    size: int,
    save_design: Callable[[dict[str, Any]], None],
    recorded: Mapping[str, Any] | None,
) -> None:
    """Ask the planner's batches until it has none, or a batch is left with errors."""
    by_id = {item.id: item for item in items}
    attempted: set[str] = set()
    while True:
        known = records()
        batch = planner.next_batch(known, recorded, size)
        recorded = planner.design()
        save_design(recorded)
        todo = [by_id[i] for i in batch if not answered(known.get(i))]
        if not todo or all(item.id in attempted for item in todo):
            return  # done, or errors this process already met (a rerun retries them)
        attempted.update(item.id for item in todo)
        await ask(todo)
