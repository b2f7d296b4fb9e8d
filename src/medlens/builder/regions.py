"""Labelled regions of an image and where to put boxes on them."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from medlens.builder.overlays import PixelBox

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

BoxStyle = Literal["area", "object", "none"]


@dataclass(frozen=True, eq=False)
class Region:
    """Pixels of an image that show one thing, with the label a question gives as the answer."""

    label: str
    mask: npt.NDArray[np.bool_]
    """Boolean array with the image's height and width."""
    box_style: BoxStyle = "area"
    """``area``: boxes are windows lying mostly inside the region (tissue, background);
    ``object``: a box encloses the whole region (an organ, the optic disc); ``none``: no box."""
    outline: bool = True
    """Whether mask and contour questions may use this region."""
    task: str = ""
    """Clinical task of questions about this region; empty: the scene's region task."""


def pure_windows(
    mask: npt.NDArray[np.bool_],
    size: int,
    rng: random.Random,
    count: int,
    min_fraction: float = 0.9,
) -> list[PixelBox]:
    """Up to ``count`` non-overlapping square windows where ``mask`` covers ≥ ``min_fraction``."""
    import numpy as np

    height, width = mask.shape
    if size < 4 or size > min(height, width):
        return []
    summed = np.pad(mask.astype(np.int64).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    step = max(2, size // 4)
    tops = np.arange(0, height - size + 1, step)[:, None]
    lefts = np.arange(0, width - size + 1, step)[None, :]
    inside = (
        summed[tops + size, lefts + size]
        - summed[tops, lefts + size]
        - summed[tops + size, lefts]
        + summed[tops, lefts]
    )
    rows, cols = np.nonzero(inside >= min_fraction * size * size)
    candidates = [
        (int(lefts[0, c]), int(tops[r, 0]), int(lefts[0, c]) + size, int(tops[r, 0]) + size)
        for r, c in zip(rows, cols, strict=True)
    ]
    rng.shuffle(candidates)
    chosen: list[PixelBox] = []
    for box in candidates:
        if all(not boxes_overlap(box, other) for other in chosen):
            chosen.append(box)
        if len(chosen) == count:
            break
    return chosen


def boxes_overlap(first: PixelBox, second: PixelBox) -> bool:
    return not (
        first[2] <= second[0]
        or second[2] <= first[0]
        or first[3] <= second[1]
        or second[3] <= first[1]
    )


def window_size(mask: npt.NDArray[np.bool_], fraction: float = 0.5) -> int:
    """A window side that fits regions like this one: part of the largest blob's extent."""
    largest = largest_blobs(mask, 1)
    if not largest:
        return 0
    rows, cols = largest[0].nonzero()
    extent = min(int(rows.max() - rows.min()) + 1, int(cols.max() - cols.min()) + 1)
    cap = min(mask.shape) // 4
    return max(8, min(cap, int(extent * fraction)))


def enclosing_box(mask: npt.NDArray[np.bool_], margin: float = 0.2) -> PixelBox:
    """The bounding box of ``mask`` grown by ``margin`` of its size, clipped to the image."""
    rows, cols = mask.nonzero()
    top, bottom = int(rows.min()), int(rows.max()) + 1
    left, right = int(cols.min()), int(cols.max()) + 1
    grow_y = max(2, round((bottom - top) * margin))
    grow_x = max(2, round((right - left) * margin))
    height, width = mask.shape
    return (
        max(0, left - grow_x),
        max(0, top - grow_y),
        min(width, right + grow_x),
        min(height, bottom + grow_y),
    )


def largest_blobs(
    mask: npt.NDArray[np.bool_], limit: int, min_area: int = 1
) -> list[npt.NDArray[np.bool_]]:
    """The ``limit`` largest connected blobs of ``mask``, largest first (ties by position)."""
    import numpy as np
    from scipy import ndimage

    labelled, count = ndimage.label(mask)
    if count == 0:
        return []
    areas = np.bincount(labelled.ravel())[1:]
    order = sorted(range(count), key=lambda index: (-int(areas[index]), index))
    return [labelled == index + 1 for index in order[:limit] if areas[index] >= min_area]


def disc_mask(
    shape: tuple[int, int], centre: tuple[float, float], radii: tuple[float, float]
) -> npt.NDArray[np.bool_]:
    """An ellipse of ``radii`` (x, y) around ``centre`` (x, y) in an image of ``shape`` (h, w)."""
    import numpy as np

    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]]
    inside = ((cols - centre[0]) / radii[0]) ** 2 + ((rows - centre[1]) / radii[1]) ** 2 <= 1.0
    return np.asarray(inside, dtype=bool)


def smooth_classes(labels: npt.NDArray[np.int_], radius: int, classes: int) -> npt.NDArray[np.int_]:
    """Majority vote of each pixel's neighbourhood, so regions are areas rather than speckle."""
    import numpy as np
    from scipy import ndimage

    size = 2 * radius + 1
    votes = np.stack(
        [ndimage.uniform_filter((labels == c).astype(np.float64), size) for c in range(classes)]
    )
    return np.asarray(votes.argmax(axis=0))


def class_regions(
    labels: npt.NDArray[np.int_],
    names: dict[int, tuple[str, BoxStyle]],
    backgrounds: frozenset[int] = frozenset(),
) -> tuple[Region, ...]:
    """One region per class value: ``names[value] = (label, box style)``.

    ``backgrounds`` are classes that surround everything else; outlining them says nothing.
    """
    regions = []
    for value, (label, style) in names.items():
        mask = labels == value
        if mask.any():
            regions.append(Region(label, mask, style, outline=value not in backgrounds))
    return tuple(regions)


def body_mask(values: npt.NDArray[np.float64], threshold: float) -> npt.NDArray[np.bool_]:
    """The largest blob above ``threshold`` with its holes filled (the patient)."""
    import numpy as np
    from scipy import ndimage

    blobs = largest_blobs(values > threshold, 1)
    if not blobs:
        return np.zeros(values.shape, dtype=bool)
    return np.asarray(ndimage.binary_fill_holes(blobs[0]), dtype=bool)
