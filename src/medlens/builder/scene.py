"""A labelled picture (a scene) and the generic questions asked about it at every granularity."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medlens.builder.overlays import COLOURS, PixelBox, draw_boxes, draw_contour, draw_mask
from medlens.builder.questions import Draft, ask_choice, ask_multi
from medlens.builder.regions import Region, enclosing_box, largest_blobs, pure_windows, window_size

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image


MIN_WINDOW = 12
"""Smallest box side (pixels) worth asking about."""


@dataclass(frozen=True, eq=False)
class Scene:
    """One source image ready for questions, with what it shows and where."""

    image_id: str
    source: str
    """The file it came from, e.g. ``pydicom/CT_small.dcm``."""
    modality: str
    department: str
    body_region: str
    image: Image.Image = field(repr=False)
    """8-bit RGB, at most 512 pixels on its long side."""
    regions: tuple[Region, ...] = ()
    findings: tuple[str, ...] = ()
    """Things visible in the whole image (gold texts for select-all questions)."""
    absent: tuple[str, ...] = ()
    """Labels that are certainly not in this image (distractors for region questions)."""
    region_wrong: tuple[str, ...] = ()
    """Distractors for the body-part question: parts certainly not shown (no anatomy question
    when empty; a shared pool would offer parts that contain or overlap the true one)."""
    region_task: str = "Anatomy Identification"
    domain: str = "radiology"
    """Scenes of different domains share no findings, so one's findings are the other's distractors."""
    area_boxes: int = 2
    """Single-box questions per ``area`` label."""

    def meta(self, task: str, granularity: str) -> dict[str, str]:
        return {
            "task": task,
            "department": self.department,
            "modality": self.modality,
            "granularity": granularity,
            "source": self.source,
            "image_id": self.image_id,
            "split": "val",
            "answer_type": "closed",
            "body_region": self.body_region,
        }

    def labels(self) -> list[str]:
        return list(dict.fromkeys(region.label for region in self.regions))


@dataclass(frozen=True)
class Pools:
    """Distractor texts shared by every scene of a benchmark."""

    modalities: tuple[str, ...]
    confusable: Mapping[str, tuple[str, ...]]
    """Modality → names never offered as its distractors (histopathology is also microscopy)."""
    findings_by_domain: dict[str, tuple[str, ...]]

    def modalities_wrong_for(self, modality: str) -> list[str]:
        """Modality names that are plainly not ``modality``."""
        excluded = {modality, *self.confusable.get(modality, ())}
        return [name for name in self.modalities if name not in excluded]

    def findings_absent_from(self, scene: Scene) -> list[str]:
        """Findings of scenes in other domains, which cannot appear in this one."""
        texts = {
            text
            for domain, findings in self.findings_by_domain.items()
            if domain != scene.domain
            for text in findings
        }
        return sorted(texts - set(scene.findings) - set(scene.labels()))


def image_questions(scene: Scene, pools: Pools, rng: random.Random) -> list[Draft]:
    """Modality, body region and (when the scene lists findings) a select-all question."""
    picture = (scene.image, scene.image_id)
    drafts = [
        ask_choice(
            f"{scene.image_id}-modality",
            "Which imaging modality or examination produced this image?",
            scene.modality,
            pools.modalities_wrong_for(scene.modality),
            picture,
            scene.meta("Modality Recognition", "image"),
            rng,
            n_options=rng.choice((4, 5)),
        )
    ]
    if scene.region_wrong:
        drafts.append(
            ask_choice(
                f"{scene.image_id}-anatomy",
                "Which body part or specimen does this image show?",
                scene.body_region,
                scene.region_wrong,
                picture,
                scene.meta("Anatomy Identification", "image"),
                rng,
                option_count(rng, scene.region_wrong),
            )
        )
    if len(scene.findings) >= 2:
        present = rng.sample(list(scene.findings), rng.randint(1, min(3, len(scene.findings))))
        drafts.append(
            ask_multi(
                f"{scene.image_id}-findings",
                "Which of the following can be seen in this image? Select all that apply.",
                present,
                pools.findings_absent_from(scene),
                picture,
                scene.meta("Attribute Recognition", "image"),
                rng,
                n_options=5,
            )
        )
    return drafts


def label_distractors(scene: Scene, label: str) -> list[str]:
    """Distractors for a question whose answer is ``label``."""
    return [text for text in (*scene.labels(), *scene.absent) if text != label]


def option_count(rng: random.Random, wrong: Sequence[str]) -> int:
    """Four or five options, at random, when there are distractors enough for five."""
    return rng.choice((4, 5)) if len(wrong) >= 4 else 4


def region_task(scene: Scene, region: Region) -> str:
    return region.task or scene.region_task


def label_boxes(scene: Scene, label: str, rng: random.Random, count: int) -> list[PixelBox]:
    """Boxes that show ``label``: windows inside an area, or boxes around whole objects."""
    regions = [region for region in scene.regions if region.label == label]
    if regions[0].box_style == "object":
        return [enclosing_box(region.mask) for region in regions][:count]
    if regions[0].box_style == "none":
        return []
    import numpy as np

    union = np.logical_or.reduce([region.mask for region in regions])
    # Thin or ragged regions hold no big pure window: shrink until enough fit.
    best: list[PixelBox] = []
    size = window_size(union)
    while size >= MIN_WINDOW and len(best) < count:
        windows = pure_windows(union, size, rng, count)
        if len(windows) > len(best):
            best = windows
        size = size * 2 // 3
    return best


def box_questions(scene: Scene, rng: random.Random) -> list[Draft]:
    """One red box per question; the answer is what the box holds."""
    drafts: list[Draft] = []
    for label in scene.labels():
        first = next(region for region in scene.regions if region.label == label)
        count = scene.area_boxes if first.box_style == "area" else 2
        question = (
            "What does the area inside the red box mainly show?"
            if first.box_style == "area"
            else "Which structure is enclosed by the red box?"
        )
        wrong = label_distractors(scene, label)
        for box in label_boxes(scene, label, rng, count):
            name = f"{scene.image_id}-box-{len(drafts):02d}"
            drafts.append(
                ask_choice(
                    name,
                    question,
                    label,
                    wrong,
                    (draw_boxes(scene.image, [(box, "red")]), name),
                    scene.meta(region_task(scene, first), "box"),
                    rng,
                    option_count(rng, wrong),
                )
            )
    return drafts


def multi_box_questions(scene: Scene, rng: random.Random, count: int) -> list[Draft]:
    """Four coloured boxes; select every box that shows the target label."""
    by_label = {label: label_boxes(scene, label, rng, 4) for label in scene.labels()}
    by_label = {label: boxes for label, boxes in by_label.items() if boxes}
    if len(by_label) < 2:
        return []
    drafts: list[Draft] = []
    for index in range(count):
        target = sorted(by_label)[index % len(by_label)]
        chosen = pick_boxes(by_label, target, rng)
        if chosen is None:
            continue
        coloured = list(zip(chosen, rng.sample(list(COLOURS), len(chosen)), strict=True))
        marked = [(box, colour) for (box, _), colour in coloured]
        gold = [f"the {colour} box" for (_, label), colour in coloured if label == target]
        wrong = [f"the {colour} box" for (_, label), colour in coloured if label != target]
        name = f"{scene.image_id}-boxes-{index:02d}"
        first = next(region for region in scene.regions if region.label == target)
        drafts.append(
            ask_multi(
                name,
                f"Which of the coloured boxes mainly show {target}? Select all that apply.",
                gold,
                wrong,
                (draw_boxes(scene.image, marked), name),
                scene.meta(region_task(scene, first), "box"),
                rng,
                n_options=len(chosen),
            )
        )
    return drafts


def pick_boxes(
    by_label: dict[str, list[PixelBox]], target: str, rng: random.Random
) -> list[tuple[PixelBox, str]] | None:
    """Four non-overlapping boxes, 1–3 of them showing ``target``, in random order."""
    from medlens.builder.regions import boxes_overlap

    hits = by_label[target]
    others = [
        (box, label)
        for label, boxes in sorted(by_label.items())
        if label != target
        for box in boxes
    ]
    n_hits = min(len(hits), rng.randint(1, 3))
    chosen = [(box, target) for box in rng.sample(hits, n_hits)]
    rng.shuffle(others)
    for box, label in others:
        if len(chosen) == 4:
            break
        if all(not boxes_overlap(box, kept) for kept, _ in chosen):
            chosen.append((box, label))
    if len(chosen) < 4:
        return None
    rng.shuffle(chosen)
    return chosen


def outline_blobs(regions: Sequence[Region]) -> tuple[npt.NDArray[np.bool_], ...]:
    """The blob to shade and the blob to outline: the largest, then a second one when it is big
    enough to see (so the mask and contour questions differ), else the largest again."""
    blobs = [blob for region in regions for blob in largest_blobs(region.mask, 2, 16)]
    if not blobs:
        return ()
    if len(blobs) > 1 and blobs[1].sum() >= 0.1 * blobs[0].sum():
        return blobs[0], blobs[1]
    return blobs[0], blobs[0]


def outline_questions(scene: Scene, rng: random.Random) -> list[Draft]:
    """Per label: its largest blob shaded (mask level) and a blob outlined (contour level)."""
    drafts: list[Draft] = []
    for label in scene.labels():
        regions = [r for r in scene.regions if r.label == label and r.outline]
        blobs = outline_blobs(regions)
        if not blobs:
            continue
        wrong = label_distractors(scene, label)
        n_options = option_count(rng, wrong)
        marks = (
            (
                "mask",
                "What does the region shaded in green show?",
                draw_mask(scene.image, blobs[0]),
            ),
            ("contour", "What is outlined in yellow?", draw_contour(scene.image, blobs[1])),
        )
        for granularity, question, picture in marks:
            name = f"{scene.image_id}-{granularity}-{len(drafts):02d}"
            meta = scene.meta(region_task(scene, regions[0]), granularity)
            drafts.append(
                ask_choice(name, question, label, wrong, (picture, name), meta, rng, n_options)
            )
    return drafts


def scene_questions(
    scene: Scene, pools: Pools, rng: random.Random, multi_boxes: int = 2
) -> list[Draft]:
    """Every generic question about one scene, in a fixed order."""
    return [
        *image_questions(scene, pools, rng),
        *box_questions(scene, rng),
        *multi_box_questions(scene, rng, multi_boxes),
        *outline_questions(scene, rng),
    ]


def make_pools(
    scenes: Sequence[Scene],
    extra_modalities: Sequence[str],
    confusable: Mapping[str, tuple[str, ...]],
) -> Pools:
    """Distractor pools from the scenes themselves plus extra plausible modality names."""
    findings: dict[str, set[str]] = {}
    for scene in scenes:
        findings.setdefault(scene.domain, set()).update(scene.findings)
    return Pools(
        modalities=tuple(sorted({s.modality for s in scenes} | set(extra_modalities))),
        confusable=dict(confusable),
        findings_by_domain={d: tuple(sorted(f)) for d, f in sorted(findings.items())},
    )
