"""A benchmark's images as files: each image of an item becomes a named :class:`Picture` (its own
suffix, else the one its first bytes say; DICOM as PNG in a TSV, which VLMEvalKit cannot read),
and ``unpack`` writes a whole benchmark as image files plus an ``items.jsonl`` manifest (owns
how images leave a benchmark as files; ``subset`` uses the pictures for its outputs)."""

from __future__ import annotations

import os
from pathlib import Path

from medlens.builder.folder import ITEMS_FILE
from medlens.builder.output import Picture, write_jsonl
from medlens.core.errors import InputError, ItemError, SpecError
from medlens.core.items import CONTAINER_SOURCES, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import load_benchmark


def picture(item: Item, ref: ImageRef, names: dict[tuple[str, str, int], str], fmt: str) -> Picture:
    key = (ref.source, ref.path, ref.offset)
    if key not in names:
        names[key] = f"{len(names) + 1:05d}{image_suffix(ref)}"

    def data() -> bytes:
        try:
            raw = ref.read_bytes()
        except ItemError as exc:
            raise InputError(item.id, "field 'images'", str(exc)) from None
        if fmt == "tsv" and raw[128:132] == b"DICM":
            from medlens.builder.images import png_bytes
            from medlens.core.items import decode_image

            return png_bytes(decode_image(raw, name=item.id))
        return raw

    return Picture(names[key], data)


_MAGIC = ((b"\x89PNG", ".png"), (b"\xff\xd8", ".jpg"), (b"GIF8", ".gif"), (b"II*\x00", ".tif"),
          (b"MM\x00*", ".tif"), (b"BM", ".bmp"), (b"RIFF", ".webp"))  # fmt: skip


def image_suffix(ref: ImageRef) -> str:
    """The file suffix for an image: its own, else from its first bytes (``.img`` if unknown)."""
    import base64
    import binascii

    if ref.source in ("file", "dicom") and (suffix := Path(ref.path).suffix.lower()):
        return suffix
    if ref.source == "volume":  # a slice rendered from a volume is a PNG
        return ".png"
    if ref.source in CONTAINER_SOURCES:  # a table cell or zip member: its name, else its bytes
        suffix = Path(ref.name).suffix.lower()
        return suffix if suffix else sniffed_suffix(ref.read_bytes()[:132])
    head = ref.data[:132]
    if ref.source == "tsv" and ref.length:
        try:
            with open(ref.path, "rb") as handle:
                handle.seek(ref.offset)
                head = base64.b64decode(handle.read(min(ref.length, 176) // 4 * 4))
        except (OSError, binascii.Error, ValueError):
            return ".img"
    return sniffed_suffix(head)


def sniffed_suffix(head: bytes) -> str:
    """The suffix the first bytes of an image say (``.img`` if unknown)."""
    if head[128:132] == b"DICM":
        return ".dcm"
    return next((suffix for magic, suffix in _MAGIC if head.startswith(magic)), ".img")


UNPACKED_ITEMS = ITEMS_FILE
UNPACKED_IMAGES = "images"


def unpack(spec: Spec, folder: Path) -> int:
    """A benchmark (typically a TSV) as image files plus an ``items.jsonl`` manifest."""
    from medlens.builder.output import staged_folder

    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise SpecError(f"--output {folder}: exists and is not an empty folder")
    benchmark = load_benchmark(spec)
    names: dict[tuple[str, str, int], str] = {}
    entries = (
        (item, tuple(picture(item, ref, names, "jsonl") for ref in item.images))
        for item in benchmark.items()
    )
    with staged_folder(folder.parent) as staging:
        staged = staging / folder.name
        staged.mkdir()
        count = write_jsonl(entries, staged / UNPACKED_ITEMS, staged / UNPACKED_IMAGES)
        if folder.exists():
            folder.rmdir()
        os.rename(staged, folder)
    return count
