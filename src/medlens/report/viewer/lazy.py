"""A run's items as the viewer reads them: their JSON objects read at start (what the list
needs for every row: ids, axes, kinds), an ``Item`` built the first time a page shows one.

Records are indexed the same way by the run view (:meth:`medlens.runs.view.RunView.record_index`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from medlens.core.items import Item


class LazyItems(Mapping[str, Item]):
    """Item id → ``Item``, built from its JSON object on first access."""

    def __init__(self, raw: Mapping[str, dict[str, Any]]) -> None:
        self.raw = raw
        self._built: dict[str, Item] = {}

    def __getitem__(self, item_id: str) -> Item:
        item = self._built.get(item_id)
        if item is None:
            item = self._built[item_id] = Item.from_json(self.raw[item_id])
        return item

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self.raw
