"""The one streaming pass of ``medlens check``: what the integrity checklist needs, accumulated
item by item in bounded memory (owns the pass; ``item_checks`` reads the rows out of it).

Items are never kept, ids are held as 8-byte digests, per-axis value counts stop at
:data:`MAX_AXIS_VALUES` distinct values (beyond that a field is free text, not an axis) and the
image sample is a fixed-size reservoir."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Mapping

from medlens.core.items import READING_FIELDS, ImageRef, Item
from medlens.sources.answerable import answerable_problems

MAX_AXIS_VALUES = 200
"""A meta field with more distinct values than this is free text and is not checked as an axis."""
LISTED = 1000
"""Items the ``answerable`` check lists at most (it lists every one, unlike the others' 10)."""
_NOT_AXES = {"id", "qid", "index", "image_id", "image", "image_path", "image_name", "question_id",
             *READING_FIELDS}  # fmt: skip


class ItemTally:
    """Everything the checklist needs, accumulated item by item in bounded memory."""

    def __init__(self, sample_size: int, seed: int) -> None:
        self.count = 0
        self.with_answer = 0
        self.without_answer: list[str] = []
        """Ids of the first items without a gold answer (bounded)."""
        self.ids: set[bytes] = set()
        self.duplicate_ids: list[str] = []
        self.gold_problems: list[str] = []
        self.unanswerable: list[str] = []
        """The first items no answer can be meaningful for (``sources.answerable``)."""
        self.unanswerable_count = 0
        self.kinds: Counter[str] = Counter()
        self.axes: dict[str, Counter[str]] = {}
        self.free_text: set[str] = set()
        self.without_images = 0
        self.sample: list[tuple[str, ImageRef]] = []
        self.images_seen = 0
        self.sample_size = sample_size
        self.rng = random.Random(seed)

    def add(self, item: Item) -> None:
        self.count += 1
        self.with_answer += item.answer is not None
        if item.answer is None and len(self.without_answer) < 1000:
            self.without_answer.append(item.id)
        self.kinds[item.kind] += 1
        digest = hashlib.blake2b(item.id.encode("utf-8"), digest_size=8).digest()
        if digest in self.ids:
            self.duplicate_ids.append(item.id)
        self.ids.add(digest)
        problem = gold_problem(item)
        if problem:
            self.gold_problems.append(f"{item.id}: {problem}")
        reasons = [why for name, why in answerable_problems(item) if name != "answer"]
        if reasons:  # an empty gold answer is gold_in_options' to list
            self.unanswerable_count += 1
            if len(self.unanswerable) < LISTED:
                self.unanswerable.append(f"{item.id}: {'; '.join(reasons)}")
        self._add_axes(item.meta)
        self._add_images(item)

    def _add_axes(self, meta: Mapping[str, str]) -> None:
        for key, value in meta.items():
            if key in self.free_text or key in _NOT_AXES:
                continue
            counter = self.axes.setdefault(key, Counter())
            counter[value] += 1
            if len(counter) > MAX_AXIS_VALUES:
                self.free_text.add(key)
                del self.axes[key]

    def _add_images(self, item: Item) -> None:
        if not item.images:
            self.without_images += 1
        for image in item.images:
            # Reservoir sampling keeps a uniform sample of every image seen, in fixed memory.
            self.images_seen += 1
            if self.sample_size <= 0 or len(self.sample) < self.sample_size:
                self.sample.append((item.id, image))
            else:
                slot = self.rng.randrange(self.images_seen)
                if slot < self.sample_size:
                    self.sample[slot] = (item.id, image)


def gold_problem(item: Item) -> str | None:
    """Why the item's gold answer is not a valid answer to it, or None when it is."""
    answer = item.answer
    if answer is None:
        return None
    if item.kind == "choice":
        return None if answer in item.options else f"gold {answer!r} is not among the options"
    if item.kind == "multi_choice":
        missing = [letter for letter in str(answer) if letter not in item.options]
        return f"gold letters {''.join(missing)!r} are not options" if missing else None
    if item.kind == "yes_no":
        allowed = item.meta.get("answer_set", "yes/no").split("/")
        return None if answer in allowed else f"gold {answer!r} is not one of {'/'.join(allowed)}"
    if item.kind == "classify":
        labels = item.meta.get("labels", "").split("|")
        return None if answer in labels else f"gold {answer!r} is not in the label set"
    if item.kind == "detect":
        if isinstance(answer, str) or not answer:
            return "gold is not a list of boxes"
        bad = [box for box in answer if len(box) != 4 or box[2] < box[0] or box[3] < box[1]]
        return f"boxes {bad} are not [x1, y1, x2, y2]" if bad else None
    return None if str(answer).strip() else "empty gold text"
