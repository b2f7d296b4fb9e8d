"""Medical images that ship inside installed packages (pydicom's test files, scikit-image's data).

Files are located on disk inside the installed package and never downloaded: a file that is
absent raises :class:`BundledFileMissing`, and callers leave that picture out.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

DATA_FOLDERS: dict[str, tuple[str, ...]] = {
    "pydicom": ("data", "test_files"),
    "skimage": ("data",),
}
"""Where each package keeps the data files that are part of its wheel."""


class BundledFileMissing(FileNotFoundError):
    """A data file is not part of the installed package (it would have to be downloaded)."""


def bundled_file(package: str, name: str) -> Path:
    """Path of ``name`` inside the installed ``package``'s data folder; never downloads."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise BundledFileMissing(f"package {package} is not installed")
    path = Path(spec.origin).parent.joinpath(*DATA_FOLDERS[package], name)
    if not path.is_file():
        raise BundledFileMissing(f"{package} does not ship {name}")
    return path


def source_name(package: str, name: str) -> str:
    """How the demo's ``source`` field names a bundled file, e.g. ``pydicom/CT_small.dcm``."""
    return f"{package}/{name}"


def read_dicom(name: str) -> Any:
    """A pydicom dataset from pydicom's bundled test files."""
    import warnings

    import pydicom

    with warnings.catch_warnings():
        # Some test files are deliberately odd; their warnings say nothing about our use.
        warnings.simplefilter("ignore")
        return pydicom.dcmread(bundled_file("pydicom", name))


def dicom_pixels(dataset: Any, frame: int = 0) -> npt.NDArray[Any]:
    """Pixel data of one frame (RGB when the file is colour), before any windowing."""
    import numpy as np

    pixels = np.asarray(dataset.pixel_array)
    frames = int(dataset.get("NumberOfFrames", 1) or 1)
    if frames > 1:
        pixels = pixels[frame]
    if dataset.get("PhotometricInterpretation", "") == "PALETTE COLOR":
        from pydicom.pixels import apply_color_lut

        rgb = np.asarray(apply_color_lut(pixels, dataset), dtype=np.float64)
        pixels = np.asarray(rgb / 257.0 if rgb.max() > 255 else rgb).round().astype(np.uint8)
    return pixels


def hounsfield_units(dataset: Any) -> npt.NDArray[np.float64]:
    """CT pixel values rescaled to Hounsfield units."""
    import numpy as np
    from pydicom.pixels import apply_modality_lut

    return np.asarray(apply_modality_lut(dicom_pixels(dataset), dataset), dtype=np.float64)


def read_skimage(name: str) -> npt.NDArray[np.uint8]:
    """A bundled scikit-image data file as an 8-bit array (greyscale or RGB)."""
    import numpy as np
    from PIL import Image

    with Image.open(bundled_file("skimage", name)) as image:
        converted = image.convert("RGB") if image.mode not in ("L", "RGB") else image.copy()
    return np.asarray(converted, dtype=np.uint8)
