"""A built benchmark on disk: ``items.jsonl`` plus ``images/*.png``, written atomically."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

from medlens.builder.images import png_bytes
from medlens.builder.questions import Draft
from medlens.core.errors import InputError
from medlens.core.items import ImageRef, Item

ITEMS_FILE = "items.jsonl"
IMAGES_DIR = "images"
STALE_AFTER_S = 3600.0
"""A staging folder this old belongs to a build that was killed; it is removed."""


def write_folder(drafts: Iterable[Draft], target: Path) -> Path:
    """Write ``drafts`` into the folder ``target`` all at once, or not at all.

    Everything is written into a hidden sibling folder that is then renamed, so a build that
    is killed, or that races another build, never leaves a half-written ``target``.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_builds(target)
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(target), dir=target.parent))
    try:
        write_contents(drafts, staging)
        try:
            os.rename(staging, target)
        except OSError:
            # Another process finished the same build first; builds are byte-identical.
            if not (target / ITEMS_FILE).is_file():
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return target


def staging_prefix(target: Path) -> str:
    return f".{target.name}.building-"


def remove_stale_builds(target: Path) -> None:
    """Delete staging folders left by killed builds of ``target`` (not by running ones)."""
    now = time.time()
    for leftover in target.parent.glob(staging_prefix(target) + "*"):
        try:
            if now - leftover.stat().st_mtime > STALE_AFTER_S:
                shutil.rmtree(leftover, ignore_errors=True)
        except OSError:
            continue


def write_contents(drafts: Iterable[Draft], folder: Path) -> int:
    """Write each distinct picture as PNG and one JSON line per item; returns the item count."""
    (folder / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    count = 0
    with open(folder / ITEMS_FILE, "w", encoding="utf-8", newline="\n") as lines:
        for draft in drafts:
            relative = f"{IMAGES_DIR}/{draft.image_name}.png"
            if relative not in written:
                (folder / relative).write_bytes(png_bytes(draft.image))
                written.add(relative)
            item = Item(
                id=draft.id,
                question=draft.question,
                kind=draft.kind,
                options=dict(draft.options),
                answer=draft.answer,
                images=(ImageRef(source="file", path=relative, name=f"{draft.image_name}.png"),),
                meta=dict(draft.meta),
            )
            lines.write(json.dumps(item.to_json(), ensure_ascii=False) + "\n")
            count += 1
    return count


def read_folder(folder: Path) -> Iterator[Item]:
    """Stream the items of a built folder, image paths made absolute."""
    path = folder / ITEMS_FILE
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = Item.from_json(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(path, f"line {number}", f"not a medlens item ({exc})") from None
            images = tuple(
                ImageRef(source=ref.source, path=str(folder / ref.path), name=ref.name)
                for ref in item.images
            )
            yield dataclasses.replace(item, images=images)
