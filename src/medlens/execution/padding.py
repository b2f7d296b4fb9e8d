"""MMBU's image rule for ``--prompt mmbu``: images smaller than 512 px on a side are padded with
black on the right and bottom up to 512, never resized (dcunhrya/MMBU-vlm-eval
``src/vqa_dataset.py`` ``pad_to_512``, snapshot 3aab73e). The padded image is a lossless PNG;
an image already 512 px or more on both sides is sent byte for byte as stored."""

from __future__ import annotations

import io

from medlens.core.errors import ItemError
from medlens.core.items import decode_image

MMBU_SIDE = 512


def pad_to_side(data: bytes, side: int = MMBU_SIDE, name: str = "") -> bytes:
    """`data` padded with black to at least `side` × `side` (top-left anchored), as PNG."""
    from PIL import Image

    image = decode_image(data, name=name)
    width, height = image.size
    if width >= side and height >= side:
        return data
    mode = image.mode if image.mode in ("RGB", "L") else "RGB"
    canvas = Image.new(mode, (max(width, side), max(height, side)), 0)
    try:
        canvas.paste(image.convert(mode), (0, 0))
    except (OSError, ValueError) as exc:
        raise ItemError("image", f"{name or 'image'}: cannot pad ({exc})") from None
    buffer = io.BytesIO()
    canvas.save(buffer, format="PNG")
    return buffer.getvalue()
