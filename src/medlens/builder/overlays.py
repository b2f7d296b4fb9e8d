"""Marks drawn on a copy of an image with Pillow: a box, a tinted mask, or an outline."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image

PixelBox = tuple[int, int, int, int]
"""(left, top, right, bottom) in pixels, right and bottom exclusive."""

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (255, 0, 0),
    "green": (0, 200, 0),
    "blue": (0, 90, 255),
    "yellow": (255, 230, 0),
}
"""Overlay colours by the name used in question text; chosen to differ from each other."""


def line_width(image: Image.Image) -> int:
    """A stroke width that stays visible at the image's size."""
    return max(2, round(min(image.size) / 170))


def draw_box(image: Image.Image, box: PixelBox, colour: str = "red") -> Image.Image:
    """A copy of ``image`` with a rectangle outline around ``box``."""
    return draw_boxes(image, [(box, colour)])


def draw_boxes(image: Image.Image, boxes: Sequence[tuple[PixelBox, str]]) -> Image.Image:
    """A copy of ``image`` with one rectangle outline per ``(box, colour name)``."""
    from PIL import ImageDraw

    marked = image.convert("RGB")
    pen = ImageDraw.Draw(marked)
    width = line_width(marked)
    for (left, top, right, bottom), colour in boxes:
        pen.rectangle((left, top, right - 1, bottom - 1), outline=COLOURS[colour], width=width)
    return marked


def draw_mask(
    image: Image.Image, mask: npt.NDArray[np.bool_], colour: str = "green", alpha: float = 0.45
) -> Image.Image:
    """A copy of ``image`` with the pixels of ``mask`` tinted in ``colour``."""
    import numpy as np
    from PIL import Image as PILImage

    base = image.convert("RGB")
    tint = PILImage.new("RGB", base.size, COLOURS[colour])
    weight = np.where(mask, round(alpha * 255), 0).astype(np.uint8)
    return PILImage.composite(tint, base, PILImage.fromarray(weight))


def draw_contour(
    image: Image.Image, mask: npt.NDArray[np.bool_], colour: str = "yellow"
) -> Image.Image:
    """A copy of ``image`` with the outline of every blob in ``mask`` drawn as a closed line."""
    import numpy as np
    from PIL import ImageDraw

    from medlens.core.extras import require_feature

    require_feature("contour overlays (granularity contour)", "demo")
    from skimage.measure import find_contours

    marked = image.convert("RGB")
    pen = ImageDraw.Draw(marked)
    width = line_width(marked)
    # Padding closes outlines of blobs that touch the border.
    padded = np.pad(mask.astype(np.float64), 1)
    for contour in find_contours(padded, 0.5):
        points = [(float(col) - 1.0, float(row) - 1.0) for row, col in contour]
        if len(points) > 2:
            pen.line([*points, points[0]], fill=COLOURS[colour], width=width, joint="curve")
    return marked
