"""An item's image as its run's model was sent it, in a form a browser shows.

The bytes are read and changed exactly as a request builds them (the run's probe, the RGB
conversion some sources ask for; the builder's box/mask/contour overlays are already in the
pixels), then passed on as they are when the browser reads the format, or decoded (DICOM,
TIFF …) and written as PNG. A thumbnail is a PNG of at most THUMB pixels a side.
"""

from __future__ import annotations

import io

from medlens.core.errors import MedlensError
from medlens.core.items import decode_image, rgb_image_bytes
from medlens.execution.probes import get_probe
from medlens.report.viewer.catalog import ViewedRun

THUMB = 160
BROWSER_FORMATS = {b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}


def sent_image(run: ViewedRun, item_id: str, index: int) -> bytes | None:
    """The image bytes of the request (None: the probe sent no image); ItemError if unreadable."""
    item = run.items.get(item_id)
    if item is None or not 0 <= index < len(item.images):
        raise MedlensError(f"{run.name}: no image {index} for item {item_id!r}")
    image = item.images[index]
    data: bytes | None = image.read_bytes()
    if run.probe and data is not None:
        data = get_probe(run.probe, run.seed).apply_image(item, index, data)
    if data is not None and item.meta.get("convert_rgb") == "1":
        data = rgb_image_bytes(data, image.name or image.path)
    return data


def browser_image(data: bytes, thumb: bool) -> tuple[bytes, str]:
    """(bytes, media type) the browser shows: as sent when it can, else a PNG of the decoding."""
    if not thumb:
        for magic, media in BROWSER_FORMATS.items():
            if data.startswith(magic):
                return data, media
    return _png(data, thumb), "image/png"


def _png(data: bytes, thumb: bool) -> bytes:
    image = decode_image(data)
    if thumb:
        image.thumbnail((THUMB, THUMB))
    if image.mode not in ("RGB", "L", "RGBA", "LA", "P", "1"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()
