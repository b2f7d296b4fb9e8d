"""The records every loader produces: Item, ImageRef, Benchmark and BenchmarkInfo."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from medlens.core.errors import ItemError
from medlens.core.specs import Spec

if TYPE_CHECKING:
    from PIL import Image

ItemKind = Literal["choice", "multi_choice", "yes_no", "open", "classify", "detect", "report"]
KINDS: tuple[str, ...] = (
    "choice",
    "multi_choice",
    "yes_no",
    "open",
    "classify",
    "detect",
    "report",
)

Box = tuple[float, float, float, float]
Answer = str | tuple[Box, ...] | None
"""Gold answer: a letter (``choice``), sorted letters such as ``"AC"`` (``multi_choice``),
``"yes"``/``"no"``/``"maybe"`` (``yes_no``), text (``open``/``classify``/``report``), boxes
(``detect``), or ``None`` when the split hides answers."""

CANONICAL_AXES: tuple[str, ...] = (
    "task",
    "department",
    "modality",
    "granularity",
    "source",
    "dimension",
    "body_system",
    "answer_type",
    "lang",
    "split",
    "template",
    "image_id",
)
READING_FIELDS: frozenset[str] = frozenset({"raw_answer", "options_text", "label_set"})
"""Meta fields kept for reading and prompting, never axes: the dataset's own spelling of a
folded yes/no gold, an options cell as written (``--prompt mmbu``), a judge's label set."""
GRANULARITIES: tuple[str, ...] = ("image", "box", "mask", "contour")

ImageSource = Literal["file", "dicom", "tsv", "bytes", "parquet", "arrow", "zip", "volume"]
CONTAINER_SOURCES: tuple[str, ...] = ("parquet", "arrow", "zip")
"""Sources read through :mod:`medlens.core.container_images` (a cell of a table, a zip member)."""


@dataclass(frozen=True)
class ImageRef:
    """A lazily read image; nothing is read from disk until :meth:`read_bytes` is called."""

    source: ImageSource
    path: str = ""
    """File path for ``file``/``dicom``; the TSV path for ``tsv``."""
    offset: int = 0
    """``tsv``: byte offset of the base64 text inside the file."""
    length: int = 0
    """``tsv``: number of bytes of base64 text."""
    data: bytes = field(default=b"", repr=False)
    """``bytes``: the encoded image itself."""
    name: str = ""
    """Stable identity of the image within its benchmark (file name, TSV index of the owning row)."""
    entry: str = ""
    """``parquet``/``arrow``: the image column (``offset`` is the row in the file); ``zip``: the
    member name; ``volume``: how the slice is rendered (``offset`` is the slice index, see
    :mod:`medlens.core.volume_images`)."""

    def read_bytes(self) -> bytes:
        """The encoded image bytes (PNG, JPEG, DICOM …); raises ItemError if unreadable."""
        try:
            if self.source == "bytes":
                return self.data
            if self.source in CONTAINER_SOURCES:
                from medlens.core.container_images import read_container_image

                return read_container_image(self.source, self.path, self.offset, self.entry)
            if self.source == "volume":
                from medlens.core.volume_images import read_volume_slice

                return read_volume_slice(self.path, self.offset, self.entry)
            if self.source == "tsv":
                if self.length == 0:
                    raise ItemError("image", f"image {self.name or self.path}: empty image cell")
                with open(self.path, "rb") as handle:
                    handle.seek(self.offset)
                    text = handle.read(self.length)
                return base64.b64decode(text, validate=False)
            with open(self.path, "rb") as handle:
                return handle.read()
        except (OSError, binascii.Error, ValueError) as exc:
            raise ItemError(
                "image", f"image {self.name or self.path}: cannot read ({exc})"
            ) from None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source, "name": self.name}
        if self.path:
            out["path"] = self.path
        if self.source == "tsv":
            out["offset"], out["length"] = self.offset, self.length
        if self.source == "bytes":
            out["data"] = base64.b64encode(self.data).decode("ascii")
        if self.source in (*CONTAINER_SOURCES, "volume"):
            out["entry"] = self.entry
            if self.source != "zip":
                out["offset"] = self.offset
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImageRef:
        raw = data.get("data")
        return cls(
            source=data["source"],
            path=data.get("path", ""),
            offset=int(data.get("offset", 0)),
            length=int(data.get("length", 0)),
            data=base64.b64decode(raw) if raw else b"",
            name=data.get("name", ""),
            entry=data.get("entry", ""),
        )


def decode_image(data: bytes, target_size: int = 0, name: str = "") -> Image.Image:
    """Decode image bytes the way VLMEvalKit does: PIL open; RGBA/P/LA → RGB; optional thumbnail.

    DICOM bytes are rendered to 8-bit greyscale (or RGB) first. Raises ItemError on failure,
    including images over Pillow's decompression-bomb limit.
    """
    from PIL import Image as PILImage

    label = name or "image"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PILImage.DecompressionBombWarning)
            if data[128:132] == b"DICM":
                image = _dicom_to_pil(data)
            else:
                image = PILImage.open(io.BytesIO(data))
                image.load()
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning) as exc:
        raise ItemError("image", f"{label}: refused, decompression bomb ({exc})") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ItemError("image", f"{label}: not a decodable image ({_reason(exc)})") from None
    if image.mode in ("RGBA", "P", "LA"):
        image = image.convert("RGB")
    if target_size > 0:
        image.thumbnail((target_size, target_size))
    return image


def _dicom_to_pil(data: bytes) -> Image.Image:
    """First frame of a DICOM file, VOI-windowed and scaled to 8 bits."""
    import numpy as np
    import pydicom
    from PIL import Image as PILImage
    from pydicom.pixels import apply_voi_lut

    dataset = pydicom.dcmread(io.BytesIO(data))
    pixels = dataset.pixel_array
    if getattr(dataset, "NumberOfFrames", 1) and int(getattr(dataset, "NumberOfFrames", 1)) > 1:
        pixels = pixels[0]
    if dataset.get("PhotometricInterpretation", "") in ("RGB", "YBR_FULL", "YBR_FULL_422"):
        return PILImage.fromarray(np.asarray(pixels, dtype=np.uint8), mode="RGB")
    values = np.asarray(apply_voi_lut(pixels, dataset), dtype=np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) / (high - low) * 255.0 if high > low else np.zeros_like(values)
    if dataset.get("PhotometricInterpretation", "") == "MONOCHROME1":
        scaled = 255.0 - scaled
    return PILImage.fromarray(scaled.round().astype(np.uint8), mode="L")


def image_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Item:
    """One benchmark question."""

    id: str
    """Stable identifier, unique within a benchmark."""
    question: str
    kind: ItemKind
    options: Mapping[str, str] = field(default_factory=dict)
    """Ordered letter → option text; empty for open kinds."""
    answer: Answer = None
    images: tuple[ImageRef, ...] = ()
    context: str | None = None
    """Extra text shown before the question (GMAI hint, PubMedQA abstract)."""
    meta: Mapping[str, str] = field(default_factory=dict)
    """Canonical axes (see CANONICAL_AXES) plus every native field the source had, as strings."""

    def to_json(self, with_images: bool = True) -> dict[str, Any]:
        answer: Any = self.answer
        if self.kind == "detect" and answer is not None:
            answer = [list(box) for box in answer]
        out: dict[str, Any] = {
            "id": self.id,
            "question": self.question,
            "kind": self.kind,
            "options": dict(self.options),
            "answer": answer,
            "context": self.context,
            "meta": dict(self.meta),
        }
        if with_images:
            out["images"] = [image.to_json() for image in self.images]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Item:
        answer = data.get("answer")
        if data["kind"] == "detect" and answer is not None:
            answer = tuple(tuple(float(v) for v in box) for box in answer)
        return cls(
            id=str(data["id"]),
            question=data["question"],
            kind=data["kind"],
            options=dict(data.get("options") or {}),
            answer=answer,
            images=tuple(ImageRef.from_json(image) for image in data.get("images", [])),
            context=data.get("context"),
            meta={str(k): str(v) for k, v in (data.get("meta") or {}).items()},
        )


@dataclass(frozen=True)
class Benchmark:
    """A loaded benchmark: what it is, plus a way to stream its items."""

    name: str
    """Loader name, e.g. ``gmai``."""
    spec: str
    """Canonical spec the user gave, e.g. ``slake:/data/slake?lang=en&split=test``."""
    split: str
    has_answers: bool
    iter_items: Callable[[], Iterator[Item]] = field(repr=False)
    description: str = ""
    source: Spec | None = field(default=None, repr=False)
    """The parsed spec it was loaded from (None for a benchmark built in code)."""
    provenance: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """Where its files came from, when the loader knows more than the spec says (``hfds:``:
    repo, revision, commit, files and sizes); recorded in run.json, not in the run's spec."""

    def items(self) -> Iterator[Item]:
        return self.iter_items()


CONTENT_HASH_VERSION = 2
"""The rule of a run.json's content hash: 1 (no ``content_hash_version``: medlens before issue
49) named each image and counted its base64 characters; 2 hashes each image's bytes
(:mod:`medlens.core.fingerprint`)."""


@dataclass(frozen=True)
class BenchmarkInfo:
    """What a run records about its benchmark (its fingerprint)."""

    name: str
    spec: str
    split: str
    n_items: int
    has_answers: bool
    content_hash: str
    """sha256 over the canonical JSON of every item, each image by its name and the sha256 of
    the bytes a model is sent (:mod:`medlens.core.fingerprint`)."""
    axes: tuple[str, ...] = ()
    """Metadata keys present on the items, canonical axes first."""
    description: str = ""
    content_hash_version: int = CONTENT_HASH_VERSION
    """How `content_hash` was computed (:data:`CONTENT_HASH_VERSION`)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "spec": self.spec,
            "split": self.split,
            "n_items": self.n_items,
            "has_answers": self.has_answers,
            "content_hash": self.content_hash,
            "content_hash_version": self.content_hash_version,
            "axes": list(self.axes),
            "description": self.description,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BenchmarkInfo:
        return cls(
            name=data["name"],
            spec=data["spec"],
            split=data["split"],
            n_items=int(data["n_items"]),
            has_answers=bool(data["has_answers"]),
            content_hash=data["content_hash"],
            axes=tuple(data.get("axes", ())),
            description=data.get("description", ""),
            content_hash_version=int(data.get("content_hash_version", 1)),
        )


def check_image(data: bytes, name: str = "") -> tuple[int, int]:
    """Cheaply confirm `data` is an image Pillow accepts (header only); return its size.

    Catches non-images and decompression bombs before a request is sent; raises ItemError.
    """
    from PIL import Image as PILImage

    label = name or "image"
    if data[128:132] == b"DICM":
        return (0, 0)
    try:
        with warnings.catch_warnings():
            # Pillow only warns between its limit and twice the limit; medlens refuses both.
            warnings.simplefilter("error", PILImage.DecompressionBombWarning)
            with PILImage.open(io.BytesIO(data)) as image:
                return image.size
    except (PILImage.DecompressionBombError, PILImage.DecompressionBombWarning) as exc:
        raise ItemError("image", f"{label}: refused, decompression bomb ({exc})") from None
    except (OSError, ValueError, SyntaxError) as exc:
        raise ItemError("image", f"{label}: not a decodable image ({_reason(exc)})") from None


def _reason(exc: Exception) -> str:
    """Pillow's message without the object address it embeds, so records stay reproducible."""
    from PIL import UnidentifiedImageError

    if isinstance(exc, UnidentifiedImageError):
        return "unknown image format"
    return str(exc) or type(exc).__name__


def rgb_image_bytes(data: bytes, name: str = "") -> bytes:
    """The image as RGB: unchanged bytes when already RGB, else a lossless PNG of its RGB form.

    Used for sources whose protocol asks for RGB (PathVQA's CMYK and greyscale JPEGs); items say
    so with ``meta["convert_rgb"] = "1"``. VLMEvalKit's own rule keeps such modes as they are.
    """
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as image:
            if image.mode == "RGB":
                return data
            converted = image.convert("RGB")
    except (OSError, ValueError, SyntaxError) as exc:
        raise ItemError(
            "image", f"{name or 'image'}: not a decodable image ({_reason(exc)})"
        ) from None
    buffer = io.BytesIO()
    converted.save(buffer, format="PNG")
    return buffer.getvalue()
