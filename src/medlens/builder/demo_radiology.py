"""Radiology pictures of the embedded demo: CT, MR, nuclear medicine and ultrasound.

Labels come from the pixels where a physical rule makes them certain (Hounsfield ranges in CT,
colour in power Doppler, count level in a bone scan), from annotations stored in the files (the
MR overlay plane), or from hand-placed shapes checked by eye (organs in the MR slice).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from medlens.builder.bundled import dicom_pixels, hounsfield_units, read_dicom
from medlens.builder.images import (
    fit_image,
    fit_labels,
    percentile_to_uint8,
    to_rgb,
    window_to_uint8,
)
from medlens.builder.regions import (
    BoxStyle,
    Region,
    body_mask,
    class_regions,
    disc_mask,
    largest_blobs,
    smooth_classes,
)
from medlens.builder.scene import Scene

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


def ct_classes(hu: npt.NDArray[np.float64], air_inside: bool) -> npt.NDArray[np.int_]:
    """Tissue class per pixel: 1 outside air, 2 air in the body, 3 fat, 4 soft tissue, 5 bone."""
    import numpy as np

    body = body_mask(hu, -400.0) if air_inside else np.ones(hu.shape, dtype=bool)
    classes = np.zeros(hu.shape, dtype=np.int64)
    classes[~body] = 1
    classes[body & (hu < -500)] = 2
    classes[body & (hu >= -190) & (hu <= -30)] = 3
    classes[body & (hu >= 0) & (hu <= 100)] = 4
    classes[body & (hu >= 200)] = 5
    return classes


def ct_scene(
    name: str,
    image_id: str,
    body_region: str,
    air_label: str,
    absent: tuple[str, ...],
    region_wrong: tuple[str, ...],
) -> Scene:
    """A CT slice in a wide window, labelled by Hounsfield range."""
    hu = hounsfield_units(read_dicom(name))
    image = fit_image(to_rgb(window_to_uint8(hu, -300.0, 400.0)))
    head = air_label != "lung"
    labels = smooth_classes(fit_labels(ct_classes(hu, head), image.size), 2, 6)
    names: dict[int, tuple[str, BoxStyle]] = {
        1: ("air outside the patient", "area"),
        2: (air_label, "area"),
        3: ("fat", "area"),
        4: ("soft tissue", "area"),
        5: ("bone", "area"),
    }
    findings = (
        ("skull bone", "brain", "air in the sinuses or mastoid cells")
        if head
        else ("vertebra", "lung", "paraspinal muscle")
    )
    return Scene(
        image_id=image_id,
        source=f"pydicom/{name}",
        modality="CT",
        department="Neurosurgery" if head else "Orthopedic Surgery",
        body_region=body_region,
        image=image,
        regions=class_regions(labels, names, frozenset({1})),
        region_wrong=region_wrong,
        findings=findings,
        absent=absent,
        region_task="Tissue Recognition",
        area_boxes=3,
    )


def extent_area(mask: npt.NDArray[np.bool_]) -> int:
    """Area of the bounding box of ``mask``."""
    rows, cols = mask.nonzero()
    return int((rows.max() - rows.min() + 1) * (cols.max() - cols.min() + 1))


def mr_abdomen_scene() -> Scene:
    """Axial abdominal MR with the radiologist's lesion mark (overlay plane) and organs by hand."""
    import numpy as np
    from scipy import ndimage
    from skimage.morphology import convex_hull_image

    dataset = read_dicom("examples_overlay.dcm")
    image = fit_image(to_rgb(percentile_to_uint8(dicom_pixels(dataset), 1.0, 99.5)))
    shape = (image.size[1], image.size[0])
    # The overlay holds a hand-drawn (not quite closed) ring around the lesion, plus text and a
    # small frame; the ring is the blob with the largest extent, the lesion its convex hull.
    # Its pixels touch only diagonally in places; one dilation joins them.
    overlay = ndimage.binary_dilation(dataset.overlay_array(0x6000).astype(bool))
    marks = largest_blobs(overlay, 8)
    ring = max(marks, key=lambda mark: extent_area(mark))
    lesion = np.asarray(convex_hull_image(ring), dtype=bool)
    organs = [
        Region("liver", disc_mask(shape, (88, 112), (18, 20)), "area", task="Organ Recognition"),
        Region("kidney", disc_mask(shape, (150, 218), (27, 30)), "object"),
        Region("kidney", disc_mask(shape, (320, 225), (27, 27)), "object"),
        Region("vertebral body", disc_mask(shape, (226, 202), (20, 22)), "object"),
        Region("aorta", disc_mask(shape, (256, 166), (12, 12)), "object"),
        Region("focal liver lesion", lesion, "object", task="Lesion Localization"),
    ]
    return Scene(
        image_id="mr_abdomen",
        source="pydicom/examples_overlay.dcm",
        modality="MR",
        department="Hepatobiliary Surgery",
        body_region="abdomen",
        image=image,
        regions=tuple(organs),
        region_wrong=("head", "knee", "hand", "eye (retina)", "breast"),
        findings=("liver", "kidneys", "vertebral body"),
        absent=("urinary bladder", "brain", "heart"),
        region_task="Organ Recognition",
    )


def bone_scan_classes(counts: npt.NDArray[np.float64]) -> npt.NDArray[np.int_]:
    """Per pixel: 1 background, 2 body, 3 head (top 11% of the body), 4 urinary bladder."""
    import numpy as np
    from scipy import ndimage

    smooth = ndimage.gaussian_filter(counts, 4)
    body = body_mask(smooth, 20.0)
    rows = np.nonzero(body.any(axis=1))[0]
    head = body & (np.arange(body.shape[0])[:, None] < rows[0] + 0.11 * (rows[-1] - rows[0]))
    # Urine collects tracer: the blob around the hottest point below the head is the bladder.
    trunk = np.where(body & ~head, smooth, 0.0)
    hottest = np.unravel_index(int(trunk.argmax()), trunk.shape)
    hot_blobs, _ = ndimage.label(trunk > 0.5 * float(trunk.max()))
    bladder = hot_blobs == hot_blobs[hottest]
    classes = np.zeros(counts.shape, dtype=np.int64)
    classes[smooth < 5] = 1
    classes[body & ~head & ~ndimage.binary_dilation(bladder, iterations=8)] = 2
    classes[head] = 3
    classes[bladder] = 4
    return classes


def bone_scan_scene() -> Scene:
    """Whole-body bone scintigraphy: background, body, head and the bladder, by count level."""
    import numpy as np

    counts = np.asarray(dicom_pixels(read_dicom("JPEG2000.dcm")), dtype=np.float64)
    image = fit_image(to_rgb(percentile_to_uint8(counts, 0.5, 99.8)))
    labels = fit_labels(bone_scan_classes(counts), image.size)
    names: dict[int, tuple[str, BoxStyle]] = {
        1: ("background outside the body", "area"),
        2: ("body (skeletal and soft-tissue uptake)", "area"),
        3: ("head", "object"),
        4: ("urinary bladder", "object"),
    }
    return Scene(
        image_id="nm_bone_scan",
        source="pydicom/JPEG2000.dcm",
        modality="Nuclear Medicine",
        department="Nuclear Medicine",
        body_region="whole body",
        image=image,
        regions=class_regions(labels, names, frozenset({1})),
        region_wrong=(
            "head only",
            "chest only",
            "pelvis only",
            "knee only",
            "single cell in saline",
        ),
        findings=("tracer uptake in the skeleton", "urinary bladder activity"),
        absent=("liver", "kidney"),
        region_task="Organ Recognition",
    )


def doppler_scene() -> Scene:
    """Power Doppler of a lymph node: flow signal, greyscale tissue and black background."""
    import numpy as np
    from scipy import ndimage

    rgb = dicom_pixels(read_dicom("examples_jpeg2k.dcm"))
    image = fit_image(to_rgb(rgb))
    pixels = np.asarray(image, dtype=np.float64)
    colourful = pixels.max(axis=2) - pixels.min(axis=2)
    # A median, unlike a mean, stays dark between the letters of burned-in text.
    brightness = ndimage.median_filter(pixels.mean(axis=2), 7)
    classes = np.zeros(colourful.shape, dtype=np.int64)
    # Burned-in text is grey too: opening erases its thin strokes, and the scanned tissue is
    # the one large grey blob that remains.
    grey = ndimage.binary_opening((colourful < 30) & (brightness > 25), iterations=3)
    classes[largest_blobs(grey, 1)[0]] = 1
    classes[colourful > 80] = 2
    # A wide mean keeps burned-in text out of the black background.
    classes[ndimage.uniform_filter(pixels.mean(axis=2), 15) < 3] = 3
    labels = smooth_classes(classes, 3, 4)
    names: dict[int, tuple[str, BoxStyle]] = {
        1: ("greyscale tissue without flow signal", "area"),
        2: ("colour Doppler flow signal", "area"),
        3: ("black background outside the scan area", "area"),
    }
    return Scene(
        image_id="us_doppler",
        source="pydicom/examples_jpeg2k.dcm",
        modality="Ultrasound",
        department="Oncology",
        body_region="lymph node",
        image=image,
        regions=class_regions(labels, names, frozenset({3})),
        region_wrong=("heart", "eye (retina)", "kidney", "colon (tissue section)"),
        findings=("colour Doppler flow signal", "lymph node", "on-screen text annotations"),
        absent=("bone", "calcified plaque"),
        region_task="Attribute Recognition",
        area_boxes=3,
    )


def echo_scene(frame: int) -> Scene:
    """One frame of a cardiac ultrasound cine loop (image-level questions only)."""
    image = fit_image(to_rgb(dicom_pixels(read_dicom("examples_ybr_color.dcm"), frame)))
    return Scene(
        image_id=f"us_echo_f{frame:02d}",
        source="pydicom/examples_ybr_color.dcm",
        modality="Ultrasound",
        department="Cardiology",
        body_region="heart",
        image=image,
        region_wrong=("lymph node", "eye (retina)", "knee", "abdomen", "head"),
        findings=("cardiac chambers", "fan-shaped ultrasound sector"),
    )
