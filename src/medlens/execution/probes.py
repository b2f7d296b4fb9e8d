"""Leakage and robustness probes: variants of a benchmark that remove or scramble evidence.

A probe run answers "how much of the score survives without the image (or the question)?". Scores
well above the random baseline under ``no-image``/``blank-image``/``noise-image`` point at text
priors or leakage (GMAI-MMBench §5.9); under ``options-only`` at answers guessable from the
options alone; ``shuffle-options`` exposes position bias. The runner applies ``apply_item`` once
when a run is created and ``apply_image`` whenever a request is built (see docs/architecture/records.md).
"""

from __future__ import annotations

import hashlib
import io
import random
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from medlens.core.errors import SpecError
from medlens.core.items import Item, decode_image
from medlens.core.registry import Registry

MID_GREY = 128


class Probe(Protocol):
    name: str

    def apply_item(self, item: Item) -> Item: ...

    def apply_image(self, item: Item, index: int, data: bytes) -> bytes | None: ...


def _seed_for(seed: int, *parts: object) -> int:
    """A 64-bit seed from the run seed and the item identity: stable across runs and machines."""
    text = "\x1f".join([str(seed), *(str(p) for p in parts)])
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


def _size(item: Item, index: int, data: bytes) -> tuple[int, int]:
    name = item.images[index].name if index < len(item.images) else ""
    size: tuple[int, int] = decode_image(data, name=name).size
    return size


@dataclass(frozen=True)
class KeepItem:
    """Base for image probes: the item itself is unchanged."""

    seed: int = 0

    def apply_item(self, item: Item) -> Item:
        return item


@dataclass(frozen=True)
class BlankImage(KeepItem):
    """Every image replaced by a mid-grey RGB PNG of the same size."""

    name: str = "blank-image"

    def apply_image(self, item: Item, index: int, data: bytes) -> bytes | None:
        from PIL import Image

        return _png(Image.new("RGB", _size(item, index, data), (MID_GREY,) * 3))


@dataclass(frozen=True)
class NoiseImage(KeepItem):
    """Every image replaced by same-size uniform RGB noise, seeded per item, index and seed."""

    name: str = "noise-image"

    def apply_image(self, item: Item, index: int, data: bytes) -> bytes | None:
        import numpy as np
        from PIL import Image

        width, height = _size(item, index, data)
        rng = np.random.default_rng(_seed_for(self.seed, "noise", item.id, index))
        pixels = rng.integers(0, 256, size=(height, width, 3), dtype=np.uint8)
        return _png(Image.fromarray(pixels, mode="RGB"))


@dataclass(frozen=True)
class NoImage(KeepItem):
    """Images are dropped from the request (the item keeps its references for the record)."""

    name: str = "no-image"

    def apply_image(self, item: Item, index: int, data: bytes) -> bytes | None:
        return None


@dataclass(frozen=True)
class KeepImages:
    """Base for text probes: the images are sent unchanged."""

    seed: int = 0

    def apply_image(self, item: Item, index: int, data: bytes) -> bytes | None:
        return data


@dataclass(frozen=True)
class OptionsOnly(KeepImages):
    """Question and context text removed; options (and images) kept."""

    name: str = "options-only"

    def apply_item(self, item: Item) -> Item:
        return replace(item, question="", context=None)


@dataclass(frozen=True)
class ShuffleOptions(KeepImages):
    """Option texts permuted over the same letters per item (seeded); the gold follows its text."""

    name: str = "shuffle-options"

    def apply_item(self, item: Item) -> Item:
        if item.kind not in ("choice", "multi_choice") or len(item.options) < 2:
            return item
        letters = list(item.options)
        order = letters[:]
        random.Random(_seed_for(self.seed, "shuffle", item.id)).shuffle(order)
        # order[i] is the old letter whose text now sits under letters[i]
        options = {new: item.options[old] for new, old in zip(letters, order, strict=True)}
        moved = {old: new for new, old in zip(letters, order, strict=True)}
        return replace(item, options=options, answer=_remap(item.answer, moved))


def _remap(answer: Any, moved: Mapping[str, str]) -> Any:
    """The gold letter(s) under the new lettering; multi-answer stays sorted; others untouched."""
    if not isinstance(answer, str) or not answer or any(ch not in moved for ch in answer):
        return answer
    return "".join(sorted(moved[ch] for ch in answer))


PROBES: Registry = Registry("probe")
PROBES.add(
    "blank-image",
    "medlens.execution.probes:BlankImage",
    "blank-image",
    "images replaced by mid-grey of the same size: is the image needed at all?",
)
PROBES.add(
    "noise-image",
    "medlens.execution.probes:NoiseImage",
    "noise-image",
    "images replaced by seeded uniform noise of the same size",
)
PROBES.add(
    "no-image",
    "medlens.execution.probes:NoImage",
    "no-image",
    "images left out of the request: text-prior / leakage check",
)
PROBES.add(
    "options-only",
    "medlens.execution.probes:OptionsOnly",
    "options-only",
    "question and context removed, options kept: guessable from options alone?",
)
PROBES.add(
    "shuffle-options",
    "medlens.execution.probes:ShuffleOptions",
    "shuffle-options",
    "option texts permuted per item (seeded), gold remapped: position bias",
)

# Probes that take away evidence: a score above chance under them is suspicious.
EVIDENCE_PROBES = frozenset({"blank-image", "noise-image", "no-image", "options-only"})
IMAGE_PROBES = frozenset({"blank-image", "noise-image", "no-image"})
"""Probes that act on images only: on a text-only benchmark they would change nothing."""


def get_probe(name: str, seed: int = 0) -> Probe:
    """The probe called `name`; SpecError with a did-you-mean for unknown names."""
    probe_class = PROBES.get(name)
    probe: Probe = probe_class(seed=seed)
    return probe


@dataclass(frozen=True)
class LeakageSuspect:
    """A slice whose score under an evidence-removing probe is significantly above chance."""

    axis: str
    """``overall`` for the whole run, else the metadata axis (``task``, ``modality`` …)."""
    value: str
    n: int
    score: float
    ci: tuple[float, float]
    random: float
    small_n: bool
    """Kept for the JSON shape: always False, since cells below min-n are never flagged."""
    images: int = 0
    p: float = 1.0
    """One-sided p of "above chance" (exact binomial; cluster-robust too when images repeat)."""
    p_adjusted: float = 1.0
    """`p` adjusted over every tested cell of the run (Holm by default)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "value": self.value,
            "n": self.n,
            "images": self.images,
            "score": self.score,
            "ci": list(self.ci),
            "random": self.random,
            "small_n": self.small_n,
            "p": self.p,
            "p_adjusted": self.p_adjusted,
        }


LEAKAGE_ALPHA = 0.05
LEAKAGE_ADJUST = ("holm", "bh")


def leakage_suspects(
    results: Mapping[str, Any], min_n: int = 50, adjust: str = "holm"
) -> list[LeakageSuspect]:
    """Slices of a probe run's results that score significantly above chance, after Holm's
    (or Benjamini–Hochberg's, `adjust` "bh") adjustment over every tested cell.

    `results` has the shape of ``report --format json``: ``{"overall": {n, images, score, ci,
    random, p_above_chance}, "by": {axis: {value: {...}}}}``. Cells with n < min_n or too few
    images (``slices.is_small``) are not tested, so never flagged. Sorted by adjusted p.
    """
    from medlens.stats.cells import is_small
    from medlens.stats.multiplicity import adjust as adjust_p

    cells: list[tuple[str, str, Mapping[str, Any]]] = []
    if isinstance(results.get("overall"), Mapping):
        cells.append(("overall", "all", results["overall"]))
    n_all = (results.get("overall") or {}).get("n")
    for axis, values in (results.get("by") or {}).items():
        if len(values) == 1 and next(iter(values.values())).get("n") == n_all:
            continue  # one value on every item (lang=en, split=test): the overall cell again
        cells.extend((axis, str(value), summary) for value, summary in values.items())
    tested = [
        (a, v, c)
        for a, v, c in cells
        if c.get("p_above_chance") is not None and c.get("score") is not None
        and not is_small(int(c.get("n", 0)), int(c.get("images", c.get("n", 0))), min_n)
    ]  # fmt: skip
    if not tested:
        return []
    p_values = [float(c["p_above_chance"]) for _, _, c in tested]
    if adjust not in LEAKAGE_ADJUST:
        raise SpecError(f"leakage adjustment: unknown method {adjust!r} (use holm or bh)")
    adjusted = adjust_p(p_values, adjust)
    suspects = [
        _suspect(a, v, c, p, float(q))
        for (a, v, c), p, q in zip(tested, p_values, adjusted, strict=True)
        if q < LEAKAGE_ALPHA
    ]
    return sorted(suspects, key=lambda s: (s.p_adjusted, s.axis, s.value))


def _suspect(
    axis: str, value: str, cell: Mapping[str, Any], p: float, adjusted: float
) -> LeakageSuspect:
    ci = cell.get("ci") or (float("nan"), float("nan"))
    n = int(cell.get("n", 0))
    return LeakageSuspect(
        axis, value, n, float(cell["score"]), (float(ci[0]), float(ci[1])),
        float(cell["random"]), False, int(cell.get("images", n)), p, adjusted,
    )  # fmt: skip
