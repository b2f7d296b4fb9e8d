"""Image preparation for the backends: lossless PNG for HTTP APIs, PIL images for local models.

Decoding always goes through :func:`medlens.core.items.decode_image` (VLMEvalKit's rules: RGBA, P and
LA become RGB, other modes are kept), and nothing is ever re-encoded lossy.
"""

from __future__ import annotations

import asyncio
import base64
import io
from collections import OrderedDict
from typing import TYPE_CHECKING

from medlens.core.items import decode_image

if TYPE_CHECKING:
    from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# PNG colour types VLMEvalKit's decoding leaves unchanged: 0 = greyscale, 2 = RGB. Palette (3),
# grey+alpha (4) and RGBA (6) are converted to RGB by VLMEvalKit, so those PNGs are re-encoded.
_KEPT_PNG_COLOUR_TYPES = (0, 2)
# Modes Pillow can write as PNG; anything else (CMYK, YCbCr, F, …) is converted to RGB first.
_PNG_WRITABLE_MODES = frozenset({"1", "L", "I", "I;16", "RGB"})


def is_passthrough_png(data: bytes) -> bool:
    """True when `data` is a PNG that VLMEvalKit decoding would leave as it is (sent untouched)."""
    return data.startswith(PNG_SIGNATURE) and len(data) > 25 and data[25] in _KEPT_PNG_COLOUR_TYPES


def png_bytes(data: bytes, name: str = "") -> bytes:
    """The image as PNG: pass-through PNGs untouched; others decoded as VLMEvalKit does, then PNG.

    Raises ItemError when the bytes are not a decodable image.
    """
    if is_passthrough_png(data):
        return data
    image = decode_image(data, name=name)
    if image.mode not in _PNG_WRITABLE_MODES:
        image = image.convert("RGB")
    buffer = io.BytesIO()
    # compress_level 1: PNG is lossless at every level, and level 1 is ~5x faster to write.
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def png_data_url(data: bytes, name: str = "") -> str:
    """A ``data:image/png;base64,…`` URL of the image (see :func:`png_bytes`)."""
    return "data:image/png;base64," + base64.b64encode(png_bytes(data, name)).decode("ascii")


class EncodedImages:
    """The data URLs of the last `capacity` images re-encoded, shared by concurrent requests.

    Decoding and PNG-encoding a JPEG costs milliseconds of CPU; the questions of one image, sent
    one after another (``--order image``), encode it once, and requests in flight together wait
    for the same encoding. Keyed by the image's sha256, so equal bytes give equal URLs.
    """

    def __init__(self, capacity: int = 32) -> None:
        self.capacity = capacity
        self._urls: OrderedDict[str, asyncio.Future[str]] = OrderedDict()

    async def url(self, data: bytes, sha256: str, name: str = "") -> str:
        if is_passthrough_png(data):  # sent as stored: only base64, nothing worth keeping
            return png_data_url(data, name)
        future = self._urls.get(sha256)
        if future is None:
            future = asyncio.ensure_future(asyncio.to_thread(png_data_url, data, name))
            self._urls[sha256] = future
            while len(self._urls) > self.capacity:
                self._urls.popitem(last=False)
        else:
            self._urls.move_to_end(sha256)
        return await future


def rgb_image(data: bytes, name: str = "") -> Image.Image:
    """A PIL RGB image for local vision towers (they need 3 channels), after VLMEvalKit decoding."""
    image = decode_image(data, name=name)
    return image if image.mode == "RGB" else image.convert("RGB")


def pixel_sha256(data: bytes) -> str:
    """sha256 of the decoded pixels (mode, size, bytes): the same for every lossless copy."""
    import hashlib

    image = decode_image(data)
    digest = hashlib.sha256(f"{image.mode}:{image.size[0]}x{image.size[1]}:".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()
