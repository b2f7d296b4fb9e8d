"""The embedded demo benchmark: every question about the bundled pictures, in a fixed order."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from functools import partial

from medlens.builder.bundled import BundledFileMissing, read_dicom
from medlens.builder.demo_optical import cell_scene, fundus_scene, ihc_scene, microaneurysm_scene
from medlens.builder.demo_radiology import (
    bone_scan_scene,
    ct_scene,
    doppler_scene,
    echo_scene,
    mr_abdomen_scene,
)
from medlens.builder.ecg import (
    LAYOUT_TEXT,
    LEADS,
    Ecg,
    heart_rate,
    qrs_polarity,
    r_peaks,
    read_ecg,
    render_ecg,
)
from medlens.builder.images import fit_image, to_rgb, window_to_uint8
from medlens.builder.overlays import COLOURS, PixelBox, draw_boxes
from medlens.builder.questions import Draft, ask_choice, ask_multi
from medlens.builder.scene import Pools, Scene, image_questions, make_pools, scene_questions

DEMO_FOLDER = "demo-v2"
"""Cache folder name; bump the version whenever the built content changes."""
SEED = 20240607

EXTRA_MODALITIES = ("X-ray", "PET", "Endoscopy", "Dermoscopy", "OCT")
CONFUSABLE_MODALITIES = {
    "Histopathology": ("Microscopy",),
    "Microscopy": ("Histopathology",),
    "Nuclear Medicine": ("PET",),
}
"""Pairs where one name arguably also describes the other; never offered as distractors."""

SceneFactory = Callable[[], Scene]

SCENES: tuple[SceneFactory, ...] = (
    partial(
        ct_scene,
        "J2K_pixelrep_mismatch.dcm",
        "ct_head",
        "head",
        "air in the sinuses or mastoid cells",
        ("lung", "kidney", "liver"),
        ("knee", "hand", "abdomen", "pelvis", "breast"),
    ),
    partial(
        ct_scene,
        "CT_small.dcm",
        "ct_thorax",
        "thorax (spine level)",
        "lung",
        ("brain", "air in the sinuses or mastoid cells", "urinary bladder"),
        ("head", "knee", "hand", "eye (retina)", "pelvis"),
    ),
    mr_abdomen_scene,
    bone_scan_scene,
    doppler_scene,
    partial(echo_scene, 0),
    partial(echo_scene, 15),
    fundus_scene,
    microaneurysm_scene,
    ihc_scene,
    cell_scene,
)


def available_scenes() -> list[Scene]:
    """Every scene whose file ships in the installed packages (absent files are left out)."""
    scenes = []
    for factory in (*SCENES, ecg_scene):
        try:
            scenes.append(factory())
        except BundledFileMissing:
            continue
    return scenes


def demo_drafts() -> Iterator[Draft]:
    """All demo questions, with source names a reader understands."""
    from medlens.builder.demo_sources import readable_source

    for draft in scene_drafts():
        yield readable_source(draft)


def scene_drafts() -> Iterator[Draft]:
    """All demo questions; each scene has its own seeded generator, so output is reproducible."""
    scenes = available_scenes()
    pools = make_pools(scenes, EXTRA_MODALITIES, CONFUSABLE_MODALITIES)
    for scene in scenes:
        rng = random.Random(f"{SEED}:{scene.image_id}")
        if scene.image_id == "ecg_12lead":
            yield from ecg_questions(scene, pools, rng)
        else:
            yield from scene_questions(scene, pools, rng)
    try:
        yield segmentation_question(random.Random(f"{SEED}:liver_seg"))
    except BundledFileMissing:
        return


def ecg_scene() -> Scene:
    image, _ = render_ecg(read_ecg("waveform_ecg.dcm"))
    return Scene(
        image_id="ecg_12lead",
        source="pydicom/waveform_ecg.dcm",
        modality="Electrocardiography",
        department="Cardiology",
        body_region="heart",
        image=image,
        region_wrong=("head", "abdomen", "knee", "eye (retina)", "lymph node"),
        domain="signal",
    )


def ecg_questions(scene: Scene, pools: Pools, rng: random.Random) -> list[Draft]:
    """Modality, heart rate, which lead is boxed, and which leads point down."""
    ecg = read_ecg("waveform_ecg.dcm")
    _, panels = render_ecg(ecg)
    picture = (scene.image, scene.image_id)
    rate = 10 * round(heart_rate(ecg) / 10)
    drafts = [
        *image_questions(scene, pools, rng),
        ask_choice(
            "ecg_12lead-rate",
            "The paper speed is 25 mm/s (one large grid square = 5 mm = 0.2 s). "
            "What is the approximate heart rate?",
            f"{rate} beats per minute",
            [f"{rate + delta} beats per minute" for delta in (-30, 30, 60, 90) if rate + delta > 0],
            picture,
            scene.meta("Attribute Recognition", "image"),
            rng,
        ),
    ]
    for lead in rng.sample(LEADS, 6):
        name = f"ecg_12lead-box-{lead}"
        drafts.append(
            ask_choice(
                name,
                f"{LAYOUT_TEXT} Which lead is inside the red box?",
                f"lead {lead}",
                [f"lead {other}" for other in LEADS if other != lead],
                (draw_boxes(scene.image, [(panels[lead], "red")]), name),
                scene.meta("Anatomy Identification", "box"),
                rng,
                n_options=rng.choice((4, 5)),
            )
        )
    drafts.extend(precordial_box_questions(scene, panels, rng, 2))
    drafts.extend(polarity_questions(scene, ecg, rng, 2))
    return drafts


def precordial_box_questions(
    scene: Scene, panels: dict[str, PixelBox], rng: random.Random, count: int
) -> list[Draft]:
    """Four coloured boxes on four leads; select the chest leads."""
    chest = [lead for lead in LEADS if lead.startswith("V")]
    limb = [lead for lead in LEADS if not lead.startswith("V")]
    drafts = []
    for index in range(count):
        n_chest = rng.randint(1, 3)
        leads = rng.sample(chest, n_chest) + rng.sample(limb, 4 - n_chest)
        colours = rng.sample(list(COLOURS), 4)
        name = f"ecg_12lead-boxes-{index:02d}"
        drafts.append(
            ask_multi(
                name,
                f"{LAYOUT_TEXT} Which coloured boxes contain a chest (precordial) lead? "
                "Select all that apply.",
                [f"the {c} box" for lead, c in zip(leads, colours, strict=True) if lead in chest],
                [f"the {c} box" for lead, c in zip(leads, colours, strict=True) if lead in limb],
                (
                    draw_boxes(
                        scene.image,
                        [(panels[lead], c) for lead, c in zip(leads, colours, strict=True)],
                    ),
                    name,
                ),
                scene.meta("Anatomy Identification", "box"),
                rng,
            )
        )
    return drafts


def polarity_questions(scene: Scene, ecg: object, rng: random.Random, count: int) -> list[Draft]:
    """Select the leads whose QRS complexes point clearly downwards (measured, not assumed)."""

    assert isinstance(ecg, Ecg)
    peaks = r_peaks(ecg)
    polarity = {lead: qrs_polarity(ecg, lead, peaks) for lead in LEADS}
    down = [lead for lead in LEADS if polarity[lead] == "negative"]
    up = [lead for lead in LEADS if polarity[lead] == "positive"]
    drafts = []
    for index in range(count):
        gold = rng.sample(down, min(len(down), rng.randint(1, 3)))
        drafts.append(
            ask_multi(
                f"ecg_12lead-polarity-{index:02d}",
                f"{LAYOUT_TEXT} In which of these leads is the QRS complex predominantly "
                "negative (pointing down)? Select all that apply.",
                [f"lead {lead}" for lead in gold],
                [f"lead {lead}" for lead in up],
                (scene.image, scene.image_id),
                scene.meta("Attribute Recognition", "image"),
                rng,
                n_options=5,
            )
        )
    return drafts


def segmentation_question(rng: random.Random) -> Draft:
    """The liver segmentation object shown as a binary picture: which organ is it?"""
    dataset = read_dicom("liver_1frame.dcm")
    label = dataset.SegmentSequence[0].SegmentLabel.lower()
    image = fit_image(to_rgb(window_to_uint8(dataset.pixel_array, 0.0, 1.0)))
    meta = {
        "task": "Organ Recognition",
        "department": "Hepatobiliary Surgery",
        "modality": "CT",  # a segmentation object drawn on a CT slice (not a modality of its own)
        "granularity": "mask",
        "source": "pydicom/liver_1frame.dcm",
        "image_id": "liver_seg",
        "split": "val",
        "answer_type": "closed",
        "body_region": "abdomen",
    }
    return ask_choice(
        "liver_seg-organ",
        "This is a binary segmentation mask of one organ on an axial abdominal slice "
        "(white = organ). Which organ is segmented?",
        label,
        ("spleen", "kidney", "stomach", "urinary bladder", "heart"),
        (image, "liver_seg"),
        meta,
        rng,
        n_options=5,
    )
