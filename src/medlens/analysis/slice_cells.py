"""One cell of a slice cube (``analysis.slices``): its key, n, score, CI and rates."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from medlens.stats.cells import one_image_note
from medlens.stats.intervals import Spread, chance_corrected


def key_label(key: Sequence[tuple[str, str]]) -> str:
    """A cell's key as text, ``modality=CT, task=VQA``; the empty key is ``overall``."""
    return ", ".join(f"{axis}={value}" for axis, value in key) or "overall"


@dataclass(frozen=True)
class Cell:
    """One cell of a cube: the items whose axes equal `key` (the overall cell has an empty key)."""

    key: tuple[tuple[str, str], ...]
    """(axis, value) pairs for the axes fixed in this cell, in the order the axes were asked."""
    records: int
    """Items with a record (scored, unscored and errored)."""
    n: int
    """Items with a score (errored items and items without gold are not scored)."""
    score: float | None
    ci: tuple[float, float] | None
    random: float | None
    vlmeval_score: float | None
    unparsed: float
    refused: float
    empty: float
    error: float
    small: bool
    """n is below the minimum, or the images are fewer than MIN_IMAGES: shown, marked, never
    ranked among the worst cells nor flagged as leakage."""
    images: int = 0
    """Images (clusters) among the scored items."""
    effective_images: float | None = None
    """Kish's effective number of images (``Spread.effective_images``): what decides `small`."""
    p_below_chance: float = 1.0
    """One-sided p of score < chance (``intervals.chance_p``), before any adjustment."""
    below_chance: bool | None = None
    """Set on listed worst cells: True only when the Holm-adjusted test over every rankable
    cell says the score lies below chance."""
    coverage: tuple[int, int] | None = None
    """Under a judged score source: (items with a verdict, items of the judge's scope)."""
    ci_unadjusted: tuple[float, float] | None = None
    """Set on listed worst cells, whose `ci` is then simultaneous over `adjusted_over` cells
    (Bonferroni), the interval that matches `below_chance`: this is the cell's own 95% CI."""
    adjusted_over: int = 0
    spread: Spread | None = field(default=None, compare=False, repr=False)
    """The cell's one-group spread (what its interval at another level needs)."""

    @property
    def label(self) -> str:
        return key_label(self.key)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": dict(self.key),
            "records": self.records,
            "n": self.n,
            "images": self.images,
            **({} if self.effective_images is None else
               {"effective_images": round(self.effective_images, 2)}),
            "score": self.score,
            "ci": list(self.ci) if self.ci else None,
            "random": self.random,
            "chance_corrected": chance_corrected(self.score, self.random),
            "vlmeval_score": self.vlmeval_score,
            "unparsed": self.unparsed,
            "refused": self.refused,
            "empty": self.empty,
            "error": self.error,
            "small": self.small,
            "note": one_image_note(self.images),
            **({} if self.below_chance is None else {"below_chance": self.below_chance}),
            **({} if self.ci_unadjusted is None else {
                "ci_unadjusted": list(self.ci_unadjusted),
                "ci_adjustment": f"simultaneous over {self.adjusted_over} cells (Bonferroni)"}),
            **({} if self.coverage is None else {"coverage": dict(
                zip(("verdicts", "scope"), self.coverage, strict=True))}),
        }  # fmt: skip


def worst_interval_note(worst: Sequence[Cell]) -> str:
    """What the worst cells' interval is, in one clause for every report."""
    over = max((c.adjusted_over for c in worst), default=0)
    if not over:
        return "the interval is the cell's own (unadjusted)"
    return (f"the interval is simultaneous over the {over} rankable cells (Bonferroni), so one "
            "wholly below chance is also flagged")  # fmt: skip
