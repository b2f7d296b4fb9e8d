"""The order in which a run sends its items: item order, or image order (`--order image`).

Image order sends the questions that share an image one after another, so a server that keeps
recently encoded images (vLLM's multi-modal cache, SGLang's radix prefix cache) encodes each
image once instead of once per question. Every request already carries the image before the
question text (``requests._user_parts``), and the image's bytes are read as stored, so two
questions on one image share the request prefix byte for byte.

The order is deterministic: groups appear in the order of their first item, and items keep
their benchmark order inside a group; an item without images, or with an image no other item
shows, stays where it was relative to the groups around it. Only the order of requests changes:
each item's request, record and score are the same in both orders (records are matched by id).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from medlens.core.errors import SpecError
from medlens.core.items import ImageRef, Item

ORDERS = ("image", "item")
"""``--order`` values; ``image`` is the default (the same as ``item`` when no image is shared)."""

ImageKey = tuple[tuple[str, str, int, int, str], ...]


def check_order(order: str) -> None:
    if order not in ORDERS:
        raise SpecError(f"--order {order!r}: expected one of {', '.join(ORDERS)}")


def image_identity(image: ImageRef) -> tuple[str, str, int, int, str]:
    """Where the image's bytes come from: two references to the same bytes compare equal
    (a TSV row that refers to another row's image has that row's offset and length)."""
    if image.source == "bytes":
        return (image.source, hashlib.sha256(image.data).hexdigest(), 0, len(image.data), "")
    return (image.source, image.path, image.offset, image.length, "")


def image_key(item: Item) -> ImageKey | None:
    """The identity of every image of the item, in order; None for a text-only item."""
    if not item.images:
        return None
    return tuple(image_identity(image) for image in item.images)


def dispatch_order(items: Sequence[Item], order: str = "image") -> list[Item]:
    """`items` in the order their requests are sent (see the module docstring)."""
    check_order(order)
    if order == "item":
        return list(items)
    groups: dict[ImageKey | int, list[Item]] = {}
    for position, item in enumerate(items):
        key = image_key(item)
        groups.setdefault(position if key is None else key, []).append(item)
    return [item for group in groups.values() for item in group]


def spread_first(items: Sequence[Item], count: int) -> list[Item]:
    """`items` with `count` of them, evenly spaced over the list, moved to the front (in their
    order): the cache's live checks (``cache_check``) then come from every part of the run
    (other images, departments, question kinds) rather than one image's questions, and are
    over before the rest is answered. Records and scores do not depend on the order."""
    if count <= 0 or len(items) <= count:
        return list(items)
    step = len(items) / count
    chosen = {int(index * step) for index in range(count)}
    return [items[i] for i in sorted(chosen)] + [
        item for i, item in enumerate(items) if i not in chosen
    ]
