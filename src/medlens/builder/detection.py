"""Candidate boxes for closed detection items: real boxes of other labels, then seeded random ones."""

from __future__ import annotations

import random
from collections.abc import Sequence

from medlens.builder.labels import Box

GOLD_IOU = 0.5
"""A box overlapping a gold box at least this much would also be a correct answer."""
RANDOM_IOU = 0.3
"""Random distractors overlap every gold box and every other option less than this."""
ATTEMPTS = 1000


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two (x0, y0, x1, y1) boxes."""
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union


def box_text(box: Box) -> str:
    """A box as option text, in whole pixels: ``[x0, y0, x1, y1]``."""
    return "[" + ", ".join(str(round(v)) for v in box) + "]"


def distractor_boxes(
    gold: Sequence[Box],
    others: Sequence[Box],
    size: tuple[int, int],
    needed: int,
    rng: random.Random,
) -> list[Box]:
    """``needed`` wrong boxes (or fewer when the image leaves no room; the caller refuses)."""
    chosen: list[Box] = []
    texts = {box_text(box) for box in gold}

    def fits(box: Box, limit: float) -> bool:
        if box_text(box) in texts or any(iou(box, g) >= limit for g in gold):
            return False
        return all(iou(box, c) < RANDOM_IOU for c in chosen)

    for box in others:
        if len(chosen) < needed and fits(box, GOLD_IOU):
            chosen.append(box)
            texts.add(box_text(box))
    x0, y0, x1, y1 = gold[0]
    width, height = round(x1 - x0), round(y1 - y0)
    for _ in range(ATTEMPTS):
        if len(chosen) >= needed or (width >= size[0] and height >= size[1]):
            break
        left = rng.randint(0, max(0, size[0] - width))
        top = rng.randint(0, max(0, size[1] - height))
        candidate = (float(left), float(top), float(left + width), float(top + height))
        if fits(candidate, RANDOM_IOU):
            chosen.append(candidate)
            texts.add(box_text(candidate))
    return chosen
