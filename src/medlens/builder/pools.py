"""Distractor pools of closed classification items, widened step by step.

A label's distractors come from the labels of rows like its own. The narrowest pool shares the
gold's ``source``, ``task``, ``body_part`` and ``modality`` (a liver CT's distractors are other
abdominal CT findings); when it holds too few labels for K options the pool widens to the same
``modality`` (any body part), then to the same ``source`` (any modality). ``task`` stays fixed
at every level: it separates label families (organs from findings), and a distractor of another
family would ask a different question. The level used is recorded per item
(``meta["distractor_pool"]``) and counted in the build's summary; ``--strict-pool`` keeps the
narrowest level only (labels whose pool is too small are skipped, as before widening existed).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from medlens.builder.labels import LabelRow

POOL_LEVELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("body_part+modality", ("source", "task", "body_part", "modality")),
    ("modality", ("source", "task", "modality")),
    ("source", ("source", "task")),
)
"""Level name (the value of ``meta["distractor_pool"]``) → the meta fields its pool shares."""
LEVEL_WORDS = {
    "body_part+modality": "same body part and modality",
    "modality": "same modality",
    "source": "same source",
}
POOL_META = "distractor_pool"

PoolKey = tuple[str, ...]


def pool_key(row: LabelRow, level: int = 0) -> PoolKey:
    """The values of the fields the row's pool shares at `level` ("" where not given)."""
    return tuple(row.meta.get(name, "") for name in POOL_LEVELS[level][1])


def describe_key(row: LabelRow, level: int) -> str:
    """``source/task/body part/modality: slake/CT`` — the pool as the skip message names it."""
    names = "/".join(name.replace("_", " ") for name in POOL_LEVELS[level][1])
    values = "/".join(pool_key(row, level)).strip("/") or "all rows"
    return f"{names}: {values}"


@dataclass(frozen=True)
class Distractors:
    """The labels a closed item draws its distractors from, and the pool level they came from."""

    labels: list[str]
    level: int

    @property
    def level_name(self) -> str:
        return POOL_LEVELS[self.level][0]


class LabelPools:
    """Distinct labels (first spelling, case-insensitive, in row order) of every pool, per level."""

    def __init__(self, rows: Sequence[LabelRow], strict: bool = False) -> None:
        self.levels = 1 if strict else len(POOL_LEVELS)
        self._pools: list[dict[PoolKey, list[str]]] = [
            label_pools(rows, level) for level in range(self.levels)
        ]
        self.used: Counter[str] = Counter()
        """Items built per level name (the build's summary)."""

    def labels(self, row: LabelRow, level: int = 0) -> list[str]:
        return self._pools[level][pool_key(row, level)]

    def distractors(
        self,
        row: LabelRow,
        gold: Collection[str],
        needed: int,
        confusable: Collection[frozenset[str]] = (),
    ) -> Distractors:
        """The narrowest pool with at least `needed` usable distractors (else the widest one).

        Usable: not a gold label (case-insensitively) and never a ``--confusable`` pair with one.
        """
        folded = {label.casefold() for label in gold}
        usable: list[str] = []
        for level in range(self.levels):
            usable = [
                label
                for label in self.labels(row, level)
                if label.casefold() not in folded
                and not any(frozenset((label.casefold(), g)) in confusable for g in folded)
            ]
            if len(usable) >= needed:
                return Distractors(usable, level)
        return Distractors(usable, self.levels - 1)

    def summary(self) -> str:
        """``distractor pools: 812 same body part and modality, 40 same modality`` (or "")."""
        if not self.used:
            return ""
        parts = [
            f"{self.used[name]:,} {LEVEL_WORDS[name]}" for name, _ in POOL_LEVELS if self.used[name]
        ]
        strict = " (--strict-pool: the narrowest pool only)" if self.levels == 1 else ""
        return f"distractor pools: {', '.join(parts)}{strict}"


def label_pools(rows: Sequence[LabelRow], level: int = 0) -> dict[PoolKey, list[str]]:
    """Distinct labels (first spelling, case-insensitive) of each pool at `level`, in order."""
    pools: dict[PoolKey, dict[str, str]] = {}
    for row in rows:
        pools.setdefault(pool_key(row, level), {}).setdefault(row.label.casefold(), row.label)
    return {key: list(labels.values()) for key, labels in pools.items()}
