"""Slices of 3D volumes rendered as images: the one place a volume's voxels become pixels.

A 3D-volume benchmark (M3D-VQA) names a volume per question; a 2D vision-language model sees a
few of its slices. Which slices, along which plane, under which intensity window and in which
order is part of the benchmark's spec (:mod:`medlens.sources.volume_slicing` chooses them); this
module reads a volume's shape from its header and renders one slice, losslessly, as an 8-bit
PNG when a request is built.

Formats: ``.npy`` (numpy; M3D's prepared volumes, ``1×D×H×W`` in [0, 1]) and NIfTI ``.nii`` /
``.nii.gz`` (nibabel, the ``medlens[nifti]`` extra, reoriented to the closest canonical RAS+
orientation so ``axial``/``coronal``/``sagittal`` mean what they say). An ``.npy`` volume has no
orientation: its slices are taken along its first spatial axis as stored (``plane=stack``).

Display convention (NIfTI): axial and coronal slices are shown as a radiologist reads them
(patient's right on the image's left, anterior/superior at the top); sagittal slices with
anterior on the left.
"""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import ItemError, SpecError

PLANES = ("stack", "axial", "coronal", "sagittal")
WINDOW_PRESETS: dict[str, tuple[float, float]] = {
    "soft-tissue": (40.0, 400.0),
    "lung": (-600.0, 1500.0),
    "bone": (400.0, 1800.0),
    "brain": (40.0, 80.0),
}
"""Named windows as (level, width) in the volume's units (Hounsfield units for CT)."""
NIFTI_SUFFIXES = (".nii", ".nii.gz")
VOLUMES_KEPT = 2
"""Volumes held decoded at once (an item's slices come from one volume, in item order)."""

_lock = threading.Lock()
_volumes: OrderedDict[str, Any] = OrderedDict()


@dataclass(frozen=True)
class Rendering:
    """How slices of a volume become pixels: the plane they cut and the intensity window."""

    plane: str
    window: str
    """``auto`` (the volume's own minimum and maximum), a preset name, or ``LEVEL,WIDTH``."""

    def entry(self) -> str:
        """The text an ImageRef carries in its ``entry`` field."""
        return f"plane={self.plane};window={self.window}"

    @classmethod
    def from_entry(cls, entry: str) -> Rendering:
        fields = dict(part.split("=", 1) for part in entry.split(";") if "=" in part)
        return cls(fields.get("plane", "stack"), fields.get("window", "auto"))


def check_rendering(plane: str, window: str) -> Rendering:
    """A Rendering from spec options; SpecError naming the option when either is unknown."""
    if plane not in PLANES:
        raise SpecError(f"plane={plane!r} is not one of {', '.join(PLANES)}")
    window_bounds(window, 0.0, 1.0)
    return Rendering(plane, window)


def window_bounds(window: str, low: float, high: float) -> tuple[float, float]:
    """The intensity range mapped to black..white; `low`/`high` are the volume's own extremes."""
    if window == "auto":
        return low, high
    if window in WINDOW_PRESETS:
        level, width = WINDOW_PRESETS[window]
    else:
        try:
            level, width = (float(part) for part in window.split(","))
        except ValueError:
            presets = ", ".join(WINDOW_PRESETS)
            raise SpecError(
                f"window={window!r}: expected auto, LEVEL,WIDTH (e.g. 40,400) or one of {presets}"
            ) from None
        if width <= 0:
            raise SpecError(f"window={window!r}: the width must be positive")
    return level - width / 2.0, level + width / 2.0


def is_nifti(path: str) -> bool:
    return path.lower().endswith(NIFTI_SUFFIXES)


def volume_shape(path: str, plane: str) -> tuple[int, ...]:
    """The volume's three spatial sizes from its header (no voxels read); raises ItemError."""
    if is_nifti(path):
        if plane == "stack":
            return tuple(int(n) for n in _nifti(path, canonical=False).shape[:3])
        return tuple(int(n) for n in _nifti(path, canonical=True).shape[:3])
    if plane != "stack":
        raise SpecError(f"plane={plane}: an .npy volume has no orientation; use plane=stack")
    return tuple(int(n) for n in _npy_shape(path))


def slice_axis(path: str, plane: str) -> int:
    """The array axis `plane` cuts: NIfTI RAS+ (x, y, z); an .npy volume's first spatial axis."""
    if not is_nifti(path):
        return 0
    return {"sagittal": 0, "coronal": 1, "axial": 2, "stack": 2}[plane]


def read_volume_slice(path: str, index: int, entry: str) -> bytes:
    """Slice `index` of the volume at `path` as a lossless 8-bit PNG; raises ItemError."""
    rendering = Rendering.from_entry(entry)
    try:
        with _lock:
            volume, low, high = _volume(path, rendering.plane)
        axis = slice_axis(path, rendering.plane)
        if not 0 <= index < volume.shape[axis]:
            raise ItemError(
                "image", f"{path}: slice {index} is outside 0..{volume.shape[axis] - 1}"
            )
        pixels = _display(volume.take(index, axis=axis), path, rendering.plane)
        return _png(_windowed(pixels, *window_bounds(rendering.window, low, high)))
    except (OSError, ValueError) as exc:
        raise ItemError("image", f"{path}: cannot read the volume ({exc})") from None


def _volume(path: str, plane: str) -> tuple[Any, float, float]:
    """The volume's voxels (3D float array) and extremes, kept for the next slices."""
    import numpy as np

    key = f"{path}\0{'native' if plane == 'stack' else 'canonical'}"
    if key in _volumes:
        _volumes.move_to_end(key)
        return _volumes[key]
    if is_nifti(path):
        data = np.asarray(_nifti(path, canonical=plane != "stack").get_fdata(dtype=np.float32))
    else:
        data = np.load(path, allow_pickle=False)
    data = _three_d(np.asarray(data, dtype=np.float32), path)
    entry = (data, float(data.min()), float(data.max()))
    _volumes[key] = entry
    while len(_volumes) > VOLUMES_KEPT:
        _volumes.popitem(last=False)
    return entry


def _three_d(data: Any, path: str) -> Any:
    """Leading and trailing length-1 axes dropped (M3D's channel axis, a NIfTI's 4th axis)."""
    while data.ndim > 3 and data.shape[0] == 1:
        data = data[0]
    while data.ndim > 3 and data.shape[-1] == 1:
        data = data[..., 0]
    if data.ndim != 3:
        raise ItemError("image", f"{path}: expected a 3D volume, found shape {data.shape}")
    return data


def _npy_shape(path: str) -> tuple[int, ...]:
    import numpy as np

    try:
        shape = np.load(path, mmap_mode="r", allow_pickle=False).shape
    except (OSError, ValueError) as exc:
        raise ItemError("image", f"{path}: not a readable .npy volume ({exc})") from None
    spatial = list(shape)
    while len(spatial) > 3 and spatial[0] == 1:
        spatial.pop(0)
    while len(spatial) > 3 and spatial[-1] == 1:
        spatial.pop()
    if len(spatial) != 3:
        raise ItemError("image", f"{path}: expected a 3D volume, found shape {tuple(shape)}")
    return tuple(spatial)


def _nifti(path: str, *, canonical: bool) -> Any:
    from medlens.core.extras import require_extra

    require_extra("NIfTI volumes (.nii, .nii.gz)", "nifti", ("nibabel",))
    import nibabel

    try:
        image = nibabel.load(path)
    except (OSError, ValueError, nibabel.filebasedimages.ImageFileError) as exc:
        raise ItemError("image", f"{path}: not a readable NIfTI volume ({exc})") from None
    return nibabel.as_closest_canonical(image) if canonical else image


def _display(pixels: Any, path: str, plane: str) -> Any:
    """The slice turned as it is read: NIfTI (x, y)/(x, z)/(y, z) rotated to rows top-down."""
    import numpy as np

    if not is_nifti(path) or plane == "stack":
        return pixels
    turned = np.rot90(pixels)
    return np.fliplr(turned) if plane == "sagittal" else turned


def _windowed(pixels: Any, low: float, high: float) -> Any:
    import numpy as np

    if high <= low:
        return np.zeros(pixels.shape, dtype=np.uint8)
    scaled = (np.clip(pixels, low, high) - low) / (high - low) * 255.0
    return np.round(scaled).astype(np.uint8)


def _png(pixels: Any) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(buffer, format="PNG")
    return buffer.getvalue()
