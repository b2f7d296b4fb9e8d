"""Tiny PNG images (and their base64) for TSV loader tests."""

from __future__ import annotations

import base64
import io

from PIL import Image


def tiny_png(shade: int = 0, mode: str = "RGB") -> bytes:
    image = Image.new(mode, (16, 12))
    image.putdata([((x * 16 + shade) % 256, 90, 200)[: len(mode)] for x in range(16 * 12)])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


PNG = tiny_png()


B64 = base64.b64encode(PNG).decode("ascii")
