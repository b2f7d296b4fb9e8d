"""Optical pictures of the embedded demo: fundus photographs, histology and cell microscopy.

Labels come from colour where a stain makes them certain (DAB brown, haematoxylin blue), from
shape (dark thin vessels, the bright cell), or from hand-placed shapes checked by eye (optic
disc, fovea, microaneurysms).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from medlens.builder.bundled import read_skimage
from medlens.builder.images import fit_image, to_rgb
from medlens.builder.regions import (
    BoxStyle,
    Region,
    class_regions,
    disc_mask,
    largest_blobs,
    smooth_classes,
)
from medlens.builder.scene import Scene

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image


def dark_lines(grey: npt.NDArray[np.float64], size: int, depth: float) -> npt.NDArray[np.bool_]:
    """Thin dark structures (vessels): where a grey closing lifts the image by ≥ ``depth``."""
    import numpy as np
    from scipy import ndimage

    lifted = ndimage.grey_closing(grey, size=(size, size)) - grey
    return np.asarray(lifted > depth, dtype=bool)


def fundus_photograph(
    name: str,
    image_id: str,
    image: Image.Image,
    regions: tuple[Region, ...],
    findings: tuple[str, ...],
    absent: tuple[str, ...],
) -> Scene:
    """A retinal picture from skimage's ``name``: what every fundus scene has in common."""
    return Scene(
        image_id=image_id,
        source=f"skimage/{name}",
        modality="Fundus Photography",
        department="Ophthalmology",
        body_region="eye (retina)",
        image=image,
        regions=regions,
        region_wrong=("heart", "lymph node", "colon (tissue section)", "knee", "abdomen"),
        findings=findings,
        absent=absent,
        region_task="Anatomy Identification",
        domain="eye",
    )


def fundus_scene() -> Scene:
    """Colour fundus photograph: optic disc and fovea placed by hand, vessels found by shape."""
    import numpy as np
    from scipy import ndimage

    image = fit_image(to_rgb(read_skimage("retina.jpg")))
    pixels = np.asarray(image, dtype=np.float64)
    shape = pixels.shape[:2]
    field_of_view = ndimage.binary_erosion(pixels.max(axis=2) > 25, iterations=4)
    vessels = largest_blobs(dark_lines(pixels[:, :, 1], 13, 10.0) & field_of_view, 1)[0]
    # Hand-placed on the 512-pixel picture (checked by eye).
    regions = (
        Region("optic disc", disc_mask(shape, (85, 231), (31, 31)), "object"),
        Region("fovea", disc_mask(shape, (256, 256), (22, 22)), "object"),
        Region("retinal blood vessels", vessels, "none"),
        Region(
            "black background outside the field of view",
            ~ndimage.binary_dilation(pixels.max(axis=2) > 25, iterations=4),
            "area",
            outline=False,
        ),
    )
    return fundus_photograph(
        "retina.jpg",
        "fundus_retina",
        image,
        regions,
        findings=("optic disc", "retinal blood vessels", "macula"),
        absent=("cotton-wool spot", "laser photocoagulation scar"),
    )


def microaneurysm_scene() -> Scene:
    """Greyscale retinal close-up: two microaneurysms placed by hand, vessels found by shape."""
    import numpy as np
    from scipy import ndimage

    grey = read_skimage("microaneurysms.png")
    image = fit_image(to_rgb(grey))
    scale = image.size[0] / grey.shape[1]
    shape = (image.size[1], image.size[0])
    pixels = np.asarray(image, dtype=np.float64)[:, :, 0]
    spots = [
        disc_mask(shape, (x * scale, y * scale), (r * scale, r * scale))
        for x, y, r in ((16.5, 23.0, 3.5), (49.0, 71.0, 3.0))
    ]
    near_spots = ndimage.binary_dilation(np.logical_or.reduce(spots), iterations=6)
    vessels = dark_lines(ndimage.gaussian_filter(pixels, 1.5), 15, 8.0) & ~near_spots
    vessel_blobs = np.logical_or.reduce(largest_blobs(vessels, 3, 200))
    background = ~ndimage.binary_dilation(vessels | near_spots, iterations=4)
    regions = (
        *(Region("microaneurysm", spot, "object", task="Lesion Localization") for spot in spots),
        Region("retinal blood vessel", vessel_blobs, "none"),
        Region("retina without lesions or large vessels", background, "area", outline=False),
    )
    return fundus_photograph(
        "microaneurysms.png",
        "fundus_microaneurysms",
        image,
        regions,
        findings=("microaneurysms", "retinal blood vessels"),
        absent=("optic disc", "hard exudate"),
    )


def ihc_scene() -> Scene:
    """Immunohistochemistry of colonic glands: DAB-brown epithelium, blue stroma, white space."""
    import numpy as np
    from scipy import ndimage
    from skimage.color import rgb2hed

    image = fit_image(to_rgb(read_skimage("ihc.png")))
    pixels = np.asarray(image, dtype=np.float64)
    dab = ndimage.uniform_filter(rgb2hed(np.asarray(image))[:, :, 2], 9)
    brightness = ndimage.uniform_filter(pixels.mean(axis=2), 21)
    classes = np.zeros(dab.shape, dtype=np.int64)
    classes[(dab < 0.03) & (brightness < 215)] = 1
    classes[dab > 0.05] = 2
    classes[(dab < 0.02) & (brightness > 232)] = 3
    labels = smooth_classes(classes, 4, 4)
    names: dict[int, tuple[str, BoxStyle]] = {
        1: ("stroma with blue haematoxylin-stained nuclei", "area"),
        2: ("gland epithelium with brown DAB staining", "area"),
        3: ("empty white space", "area"),
    }
    return Scene(
        image_id="ihc_colon",
        source="skimage/ihc.png",
        modality="Histopathology",
        department="Pathology",
        body_region="colon (tissue section)",
        image=image,
        regions=class_regions(labels, names),
        region_wrong=("eye (retina)", "lymph node", "single cell in saline", "heart", "knee"),
        findings=("glands with brown DAB staining", "blue haematoxylin-stained nuclei"),
        absent=("red blood cells in a vessel", "fat cells"),
        region_task="Cell Recognition",
        domain="cells",
        area_boxes=4,
    )


def cell_scene() -> Scene:
    """Quantitative phase image of one cell floating in saline."""
    import numpy as np
    from scipy import ndimage

    grey = read_skimage("cell.png")
    image = fit_image(to_rgb(grey))
    smooth = ndimage.gaussian_filter(np.asarray(image, dtype=np.float64)[:, :, 0], 3)
    level = float(np.median(smooth))
    cell = largest_blobs(smooth > level + 40, 1)[0]
    background = ~ndimage.binary_dilation(cell | (smooth > level + 25), iterations=25)
    regions = (
        Region("cell", np.asarray(ndimage.binary_fill_holes(cell), dtype=bool), "object"),
        Region("saline background", background, "area", outline=False),
    )
    return Scene(
        image_id="cell_phase",
        source="skimage/cell.png",
        modality="Microscopy",
        department="Laboratory Medicine",
        body_region="single cell in saline",
        image=image,
        regions=regions,
        region_wrong=("heart", "abdomen", "eye (retina)", "colon (tissue section)", "knee"),
        findings=("a single round cell", "cell-free saline background"),
        absent=("blood vessel", "bacterial colony", "crystal"),
        region_task="Cell Recognition",
        domain="cells",
    )
