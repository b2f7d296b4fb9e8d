"""``medlens build``: items from a labels file, at image/box/mask/contour granularity.

Rows become groups, each group one item (one per template):

- ``--task classify --granularity image``: all labels of one image → one item (several labels
  → a select-all ``multi_choice`` item); pixels unchanged.
- ``box``: the labels of one box on one image (the row's box, or the bounding box of its mask),
  the box outlined in red; ``mask``: the mask tinted green; ``contour``: the mask's outline
  traced in yellow.
- ``--task detect``: all boxes of one label on one image. Open (``--options 0``): a ``detect``
  item, answer = the boxes, scored at IoU ≥ 0.5. Closed: the options are candidate boxes (the
  gold boxes, boxes of other labels on the image, then seeded random boxes of the gold's size
  overlapping no gold box by IoU ≥ 0.3).

Closed classification: gold plus K−1 distractors drawn (seeded) from the labels of the same
``source``/``task``/``body_part``/``modality`` pool (a liver CT's distractors are other
abdominal CT findings, never a fundus lesion), widened to the same modality, then the same
source, when that pool is too small (``builder.pools``; the level is ``meta["distractor_pool"]``,
``--strict-pool`` keeps the narrowest), never a ``--confusable`` pair, texts distinct (case-insensitively);
single-answer gold letters are balanced: each run of K such items uses every letter once, in a
seeded order. Open classification (``--options 0``): a ``classify`` item whose label set
(``meta["labels"]``) is the pool.

A label that cannot become an item (an image with several labels has no single open answer, a
box leaves no room for distractor boxes, a pool is too small, a template lacks its modality)
is skipped and counted per reason, the first rows named (``builder.skips``); ``--strict``
refuses at the first instead. Malformed input (an unreadable image, a mask of the wrong size)
is always refused.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from medlens.builder.labels import Box, LabelRow, LabelsFile
from medlens.builder.output import Entry, Picture
from medlens.builder.pools import POOL_META, Distractors, LabelPools, describe_key
from medlens.builder.questions import LETTERS, BalancedLetters, choose_options, move_gold
from medlens.builder.skips import SkipLog, Unbuildable
from medlens.builder.wording import WordingLint, context_sentence, stem, with_context
from medlens.core.errors import InputError, SpecError
from medlens.core.items import Item, ItemKind
from medlens.core.lexicon import Lexicon

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PIL import Image

GRANULARITIES = ("image", "box", "mask", "contour")
TASKS = ("classify", "detect")
RECENT_IMAGES = 8
"""Decoded source images kept in memory at once."""


@dataclass(frozen=True)
class BuildOptions:
    granularity: str = "image"
    task: str = "classify"
    options: int = 4
    """K options per closed item; 0 = open items."""
    templates: tuple[str, ...] = ("none",)
    seed: int = 0
    question: str | None = None
    confusable: frozenset[frozenset[str]] = frozenset()
    lint: tuple[str, ...] = ()
    lexicon: Lexicon | None = None
    """The wording lexicon (None: the built-in one)."""
    strict: bool = False
    """Refuse at the first label that cannot become an item, instead of skipping it."""
    strict_pool: bool = False
    """Draw distractors from the narrowest pool only (same source/task/body part/modality)."""

    def check(self) -> None:
        if self.granularity not in GRANULARITIES:
            raise SpecError(f"--granularity {self.granularity!r}: expected image|box|mask|contour")
        if self.task not in TASKS:
            raise SpecError(f"--task {self.task!r}: expected classify or detect")
        if self.task == "detect" and self.granularity != "image":
            raise SpecError("--task detect draws nothing on the image: use --granularity image")
        if self.options == 1 or not 0 <= self.options <= len(LETTERS):
            raise SpecError(f"--options {self.options}: expected 0 (open) or 2 to {len(LETTERS)}")


@dataclass
class Group:
    """Rows that become one item."""

    rows: list[LabelRow]
    labels: list[str] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)


@dataclass(frozen=True)
class Base:
    """An item before its template: kind, options, answer, meta and picture."""

    kind: ItemKind
    options: dict[str, str]
    answer: str | tuple[Box, ...]
    meta: dict[str, str]
    picture: Picture
    label: str


class LabelledBuild:
    """One build: ``entries()`` streams the items; ``warnings`` fills as it goes."""

    def __init__(self, labels: LabelsFile, options: BuildOptions) -> None:
        options.check()
        self.labels, self.options = labels, options
        self.warnings: list[str] = []
        self.groups = group_rows(labels, options)
        self.pools = LabelPools(labels.rows, strict=options.strict_pool)
        self._letters = BalancedLetters(options.options, random.Random(f"{options.seed}:letters"))
        self._names: dict[str, str] = {}
        """Source image path → its picture's file name (stable for the whole build)."""
        self._recent: OrderedDict[str, tuple[Image.Image, Picture]] = OrderedDict()
        """The last few decoded images (rows of one image are usually adjacent)."""
        self._image_boxes: dict[str, list[tuple[str, Box]]] = {}
        self._ids: set[str] = set()
        self.skips = SkipLog()
        self.wording = WordingLint(options.lint, options.lexicon)
        self.on_group: Callable[[], None] | None = None
        """Called after each label group (built or skipped): the command's progress bar."""
        if options.question and "{label}" in options.question and options.task == "classify":
            self.warnings.append(
                "--question contains {label}: on classify items the label is the answer, so "
                "the question gives the answer away"
            )
        for row in labels.rows:
            if (box := row.box) is not None:
                self._image_boxes.setdefault(row.image, []).append((row.label.casefold(), box))

    def meta_keys(self) -> list[str]:
        keys = [k for row in self.labels.rows for k in row.meta]
        keys += ["granularity", "template", "answer_type", "perception_task"]
        closed_labels = self.options.task == "classify" and self.options.options > 0
        return [*keys, POOL_META] if closed_labels else keys

    def entries(self) -> Iterator[Entry]:
        built = 0
        for index, group in enumerate(self.groups, start=1):
            try:  # a group's entries are made whole first: a skip leaves none of them behind
                made = list(self._templated(index, group, self._base(index, group)))
            except Unbuildable as skipped:
                if self.options.strict:
                    raise
                self.skips.add(skipped)
                made = []
            if self.on_group is not None:
                self.on_group()
            built += len(made)
            yield from made
        self.warnings += self.wording.summary() + self.skips.lines(len(self.groups))
        if not built:
            reasons = "; ".join(self.skips.rows)
            raise InputError(self.labels.path, None, f"no label could be made an item ({reasons})")

    def _templated(self, index: int, group: Group, base: Base) -> Iterator[Entry]:
        first = group.rows[0]
        base_id = first.id or str(index)
        multi = base.kind == "multi_choice" or (len(base.answer) > 1 and base.kind == "detect")
        closed = self.options.options > 0
        text = stem(self.options.granularity, self.options.task, multi, closed, base.label,
                    self.options.question)  # fmt: skip
        for template in self.options.templates:
            context = context_sentence(template, first.meta, self.labels.path, first.where)
            question = with_context(context, text)
            item_id = base_id if len(self.options.templates) == 1 else f"{base_id}:{template}"
            if item_id in self._ids:
                where = f"{first.where}, field 'id'"
                raise InputError(self.labels.path, where, f"duplicate item id {item_id!r}")
            self._ids.add(item_id)
            self._lint(f"{self.labels.path}, {first.where}", item_id, question, base)
            item = Item(
                id=item_id,
                question=question,
                kind=base.kind,
                options=base.options,
                answer=base.answer,
                meta={**base.meta, "template": template},
            )
            yield item, (base.picture,)

    def _lint(self, where: str, item_id: str, question: str, base: Base) -> None:
        """MMBU's wording rules on one question: its gold is the label (the option texts of the
        gold letters); a detect question's label is the target it asks to locate."""
        if base.kind == "detect":
            self.wording.add(where, item_id, question, "detect", (), (), target=base.label)
            return
        letters = str(base.answer)
        golds = [base.options[c] for c in letters if c in base.options] or [base.label]
        self.wording.add(where, item_id, question, base.kind, list(base.options.values()), golds)

    def _base(self, index: int, group: Group) -> Base:
        first = group.rows[0]
        rng = random.Random(f"{self.options.seed}:{index}")
        image, plain = self._image(first)
        meta = {
            **first.meta,
            "granularity": self.options.granularity,
            "answer_type": "closed" if self.options.options else "open",
            "perception_task": self.options.task,
            "image_id": first.image,
        }
        if self.options.task == "detect":
            return self._detect(group, image, plain, meta, rng)
        picture = (
            self._overlay(index, group, image) if self.options.granularity != "image" else plain
        )
        if not self.options.options:
            if len(group.labels) > 1:
                reason = "several labels: an open classify item takes one (use --options K)"
                raise Unbuildable(self.labels.path, first.where, reason, reason, first.where)
            meta["labels"] = "|".join(self.pools.labels(first))
            return Base("classify", {}, group.labels[0], meta, picture, group.labels[0])
        needed = self.options.options - len(group.labels)
        pool = self.pools.distractors(first, group.labels, needed, self.options.confusable)
        options, answer = self._closed_options(group, group.labels, pool.labels, rng, pool)
        meta[POOL_META] = pool.level_name
        self.pools.used[pool.level_name] += 1
        kind: ItemKind = "multi_choice" if len(answer) > 1 else "choice"
        return Base(kind, options, answer, meta, picture, group.labels[0])

    def _closed_options(
        self,
        group: Group,
        gold: Sequence[str],
        wrong: Sequence[str],
        rng: random.Random,
        pool: Distractors | None = None,
    ) -> tuple[dict[str, str], str]:
        k = self.options.options
        first = group.rows[0]
        if len(gold) >= k or len(wrong) < k - len(gold):
            if self.options.task == "detect":
                field_name = "box"
                reason = f"cannot make {k} box options: no room for distractor boxes"
                problem = f"cannot make {k} box options: {len(gold)} gold boxes and room for "
                problem += f"{len(wrong)} distractor boxes"
            else:
                field_name = "label"
                level = pool.level if pool is not None else 0
                reason = f"label pool too small for {k} options"
                problem = (
                    f"{reason}: {len(gold)} gold and {len(wrong)} usable distractors (pool of "
                    f"{describe_key(first, level)})"
                )
            where = f"{first.where}, field {field_name!r}"
            raise Unbuildable(self.labels.path, where, problem, reason, first.where)
        options, answer = choose_options(gold, wrong, rng, k)
        if len(answer) == 1:
            options, answer = move_gold(options, answer, LETTERS[self._letters.next()])
        return options, answer

    def _image(self, row: LabelRow) -> tuple[Image.Image, Picture]:
        """The row's image and its unchanged picture (decoded again if it left the cache)."""
        if row.image in self._recent:
            self._recent.move_to_end(row.image)
            return self._recent[row.image]
        from medlens.builder.images import png_bytes
        from medlens.builder.readers import UnreadableImage, read_image

        try:
            image = read_image(row.image_path)
        except (UnreadableImage, OSError) as exc:
            where = f"{row.where}, field 'image'"
            raise InputError(self.labels.path, where, str(exc)) from None
        name = self._names.setdefault(row.image, f"i{len(self._names) + 1:05d}.png")
        self._recent[row.image] = (image, Picture(name, lambda: png_bytes(image)))
        if len(self._recent) > RECENT_IMAGES:
            self._recent.popitem(last=False)
        return self._recent[row.image]

    def _overlay(self, index: int, group: Group, image: Image.Image) -> Picture:
        from medlens.builder.images import png_bytes
        from medlens.builder.overlays import draw_box, draw_contour, draw_mask

        first = group.rows[0]
        if self.options.granularity == "box":
            box = self._checked_box(first, image)
            marked = draw_box(image, tuple(round(v) for v in box))  # type: ignore[arg-type]
        else:
            mask = self._mask(first, image)
            draw = draw_mask if self.options.granularity == "mask" else draw_contour
            marked = draw(image, mask)
        return Picture(f"g{index:05d}.png", lambda: png_bytes(marked))

    def _checked_box(self, row: LabelRow, image: Image.Image) -> Box:
        if row.box is None:
            return mask_box(self.labels.path, row, self._mask(row, image))
        x0, y0, x1, y1 = row.box
        width, height = image.size
        if x0 < 0 or y0 < 0 or x1 > width or y1 > height:
            problem = f"box {list(row.box)} lies outside the {width}×{height} image"
            raise InputError(self.labels.path, f"{row.where}, field 'box'", problem)
        return row.box

    def _mask(self, row: LabelRow, image: Image.Image) -> npt.NDArray[np.bool_]:
        from medlens.builder.readers import UnreadableImage, read_mask

        where = f"{row.where}, field 'mask'"
        if row.mask_path is None:
            raise InputError(self.labels.path, where, f"{self.options.granularity} needs a mask")
        try:
            mask = read_mask(row.mask_path)
        except (UnreadableImage, OSError) as exc:
            raise InputError(self.labels.path, where, str(exc)) from None
        if mask.shape != (image.size[1], image.size[0]):
            problem = (
                f"mask is {mask.shape[1]}×{mask.shape[0]}, image {image.size[0]}×{image.size[1]}"
            )
            raise InputError(self.labels.path, where, problem)
        if not mask.any():
            raise InputError(self.labels.path, where, "empty mask (no nonzero pixel)")
        return mask

    def _detect(
        self,
        group: Group,
        image: Image.Image,
        plain: Picture,
        meta: dict[str, str],
        rng: random.Random,
    ) -> Base:
        from medlens.builder.detection import box_text, distractor_boxes

        label = group.labels[0]
        boxes = tuple(self._checked_box(row, image) for row in group.rows)
        meta = {**meta, "label": label, "box_format": "pixel",
                "image_width": str(image.size[0]), "image_height": str(image.size[1])}  # fmt: skip
        if not self.options.options:
            return Base("detect", {}, boxes, meta, plain, label)
        first = group.rows[0]
        others = [
            box for name, box in self._image_boxes.get(first.image, ()) if name != label.casefold()
        ]
        wrong = distractor_boxes(boxes, others, image.size, self.options.options - len(boxes), rng)
        gold = [box_text(box) for box in boxes]
        options, answer = self._closed_options(group, gold, [box_text(b) for b in wrong], rng)
        kind: ItemKind = "multi_choice" if len(answer) > 1 else "choice"
        return Base(kind, options, answer, meta, plain, label)


def mask_box(path: object, row: LabelRow, mask: npt.NDArray[np.bool_]) -> Box:
    """Bounding box of a mask's nonzero pixels (right/bottom exclusive)."""
    import numpy as np

    rows, cols = np.nonzero(mask)
    return (float(cols.min()), float(rows.min()), float(cols.max() + 1), float(rows.max() + 1))


def group_rows(labels: LabelsFile, options: BuildOptions) -> list[Group]:
    """Rows → groups in first-row order (see the module docstring for the keys)."""
    groups: dict[tuple[str, ...], Group] = {}
    for row in labels.rows:
        if options.task == "detect":
            if row.box is None and row.mask is None:
                raise InputError(
                    labels.path, f"{row.where}, field 'box'", "detect needs a box or mask"
                )
            key: tuple[str, ...] = (row.image, row.label.casefold())
        elif options.granularity == "image":
            key = (row.image,)
        elif options.granularity == "box":
            if row.box is None and row.mask is None:
                raise InputError(
                    labels.path, f"{row.where}, field 'box'", "box items need a box or mask"
                )
            key = (row.image, repr(row.box) if row.box else f"mask:{row.mask}")
        else:
            if row.mask is None:
                raise InputError(
                    labels.path,
                    f"{row.where}, field 'mask'",
                    f"{options.granularity} items need a mask",
                )
            key = (row.image, row.mask)
        group = groups.setdefault(key, Group([]))
        group.rows.append(row)
        if row.label.casefold() not in {label.casefold() for label in group.labels}:
            group.labels.append(row.label)
    return list(groups.values())
