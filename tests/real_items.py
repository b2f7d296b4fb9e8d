"""Items of the real data sets (../shared/realdata) looked up by id, for the reading tests."""

from __future__ import annotations

import functools

from data_paths import realdata_dir
from medlens.core.items import Item

SPECS = {
    "vqa-rad": ("vqa-rad", "vqa_rad"),
    "slake": ("slake", "slake"),
    "pathvqa": ("pathvqa", "pathvqa"),
    "pubmedqa": ("pubmedqa", "pubmedqa"),
    "medmcqa": ("medmcqa", "medmcqa/dev.json"),
    "medqa": ("medqa", "medqa"),
}


@functools.cache
def _items(bench: str) -> dict[str, Item]:
    from medlens.api import load_benchmark

    prefix, folder = SPECS[bench]
    root = realdata_dir(folder.split("/")[0])
    path = root / folder.split("/", 1)[1] if "/" in folder else root
    return {item.id: item for item in load_benchmark(f"{prefix}:{path}").items()}


def real_item(bench: str, item_id: str) -> Item:
    return _items(bench)[item_id]
