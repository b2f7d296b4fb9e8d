"""Reading a labelled image for ``medlens build``: DICOM (pydicom, windowed), PNG, JPEG, TIFF.

Every reader returns an 8-bit ``L`` or ``RGB`` Pillow image at the file's own size (no resizing,
so box coordinates stay in the file's pixel frame). DICOM: modality LUT (rescale), then the
file's first Window Center/Width when it has one, else the 1st–99.5th percentile; MONOCHROME1
inverted; multi-frame files give their first frame. Images Pillow holds at more than 8 bits
(16-bit PNG/TIFF, float TIFF) get the same percentile window. NIfTI is out of scope (no
well-kept reader is a medlens dependency).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.builder.images import percentile_to_uint8, window_to_uint8

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image

_NIFTI = (".nii", ".nii.gz")


class UnreadableImage(ValueError):
    """The file is not an image medlens build can read (the caller names file, row and field)."""


def read_image(path: Path) -> Image.Image:
    """The image at ``path`` as 8-bit L or RGB; raises UnreadableImage."""
    if path.name.lower().endswith(_NIFTI):
        raise UnreadableImage("NIfTI volumes are not supported (export a slice as PNG)")
    with open(path, "rb") as handle:
        head = handle.read(132)
    if head[128:132] == b"DICM" or path.suffix.lower() == ".dcm":
        return _read_dicom(path)
    return _read_pillow(path)


def _read_pillow(path: Path) -> Image.Image:
    import numpy as np
    from PIL import Image as PILImage

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", PILImage.DecompressionBombWarning)
            with PILImage.open(path) as opened:
                opened.load()
                image = opened.copy()
    except (OSError, ValueError, SyntaxError, PILImage.DecompressionBombWarning) as exc:
        raise UnreadableImage(f"not a readable image ({exc})") from None
    if image.mode in ("L", "RGB"):
        return image
    if image.mode in ("1", "P", "LA", "RGBA", "CMYK", "YCbCr", "LAB", "HSV", "PA", "La", "RGBa"):
        return image.convert("RGB" if image.mode not in ("1",) else "L")
    # I;16, I, F and friends: more than 8 bits per pixel → window into 8 bits
    values = np.asarray(image, dtype=np.float64)
    return PILImage.fromarray(percentile_to_uint8(values))


def _read_dicom(path: Path) -> Image.Image:
    import numpy as np
    import pydicom
    from PIL import Image as PILImage
    from pydicom.pixels import apply_modality_lut

    from medlens.builder.bundled import dicom_pixels

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dataset = pydicom.dcmread(path)
            pixels = dicom_pixels(dataset)
    except Exception as exc:  # pydicom raises many types for broken or unsupported files
        raise UnreadableImage(f"not a readable DICOM image ({exc})") from None
    photometric = str(dataset.get("PhotometricInterpretation", ""))
    if pixels.ndim == 3 and pixels.shape[-1] == 3:
        if photometric.startswith("YBR"):
            from pydicom.pixels import convert_color_space

            pixels = convert_color_space(pixels, photometric, "RGB")
        return PILImage.fromarray(np.asarray(pixels, dtype=np.uint8), mode="RGB")
    values = np.asarray(apply_modality_lut(pixels, dataset), dtype=np.float64)
    scaled = _dicom_window(values, dataset)
    if photometric == "MONOCHROME1":
        scaled = 255 - scaled
    return PILImage.fromarray(np.ascontiguousarray(scaled, dtype=np.uint8), mode="L")


def _dicom_window(values: npt.NDArray[np.float64], dataset: Any) -> npt.NDArray[np.uint8]:
    """The file's own window (first value of a multi-valued tag), else a percentile window."""
    center, width = dataset.get("WindowCenter"), dataset.get("WindowWidth")
    try:
        center = float(center[0] if isinstance(center, (list, tuple)) or _multi(center) else center)
        width = float(width[0] if isinstance(width, (list, tuple)) or _multi(width) else width)
    except (TypeError, ValueError, IndexError):
        return percentile_to_uint8(values)
    if width <= 1:
        return percentile_to_uint8(values)
    return window_to_uint8(values, center - width / 2, center + width / 2)


def _multi(value: Any) -> bool:
    from pydicom.multival import MultiValue

    return isinstance(value, MultiValue)


def read_mask(path: Path) -> npt.NDArray[np.bool_]:
    """A mask image as booleans (nonzero = region); colour masks count any nonzero channel."""
    import numpy as np

    image = read_image(path) if path.suffix.lower() == ".dcm" else _read_raw_mask(path)
    array = np.asarray(image)
    return np.asarray(array.any(axis=2) if array.ndim == 3 else array != 0, dtype=np.bool_)


def _read_raw_mask(path: Path) -> Image.Image:
    from PIL import Image as PILImage

    try:
        with PILImage.open(path) as opened:
            opened.load()
            return opened.copy()
    except (OSError, ValueError, SyntaxError) as exc:
        raise UnreadableImage(f"not a readable mask image ({exc})") from None
