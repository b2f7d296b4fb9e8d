"""When a cell is too small to rank or flag: the one rule every report, slice and board uses."""

from __future__ import annotations

DEFAULT_MIN_N = 50
MIN_IMAGES = 10
"""Cells drawn from fewer images (clusters) than this count as small, like n < min-n."""
ONE_IMAGE = "one image: the interval speaks for this image's questions only"
MIN_COMPARE_IMAGES = 3
"""A comparison over fewer (effective) images than this has a cluster-robust interval with at
most one degree of freedom: −94 … +94 points says less than "too few images to compare"."""
TOO_FEW_IMAGES = "too few images to compare"


def one_image_note(images: int) -> str | None:
    """The note a cell drawn from a single image carries (None for other cells)."""
    return ONE_IMAGE if images == 1 else None


def is_small(n: int, images: float, min_n: int = DEFAULT_MIN_N) -> bool:
    """Too few items, or too few images, to rank or flag the cell (shown, marked); `images` is
    the effective number (``Spread.effective_images``) where the caller has it, so one image
    holding most of the cell's questions does not count as many."""
    return bool(n < min_n or images < min(MIN_IMAGES, min_n))


def too_few_to_compare(images: int, effective_images: float) -> bool:
    """Two or more images, but fewer than MIN_COMPARE_IMAGES once unbalanced images are counted
    by Kish's effective number (one image: the interval speaks for that image, ``ONE_IMAGE``)."""
    return images >= 2 and effective_images < MIN_COMPARE_IMAGES
