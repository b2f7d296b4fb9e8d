"""The scored items of one question kind, gathered once for every corpus metric of that kind."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record

Statistic = Callable[[np.ndarray], np.ndarray]
"""(resamples × k) summed sufficient statistics → (resamples,) metric values."""


@dataclass
class KindRows:
    """The scored items of one kind, with what each corpus metric needs."""

    items: list[Item] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    means: dict[str, np.ndarray] = field(default_factory=dict)
    corpus: dict[str, tuple[np.ndarray, Statistic]] = field(default_factory=dict)
    notes: dict[str, dict[str, str]] = field(default_factory=dict)
    only: dict[str, np.ndarray] = field(default_factory=dict)
    """Items a corpus metric applies to (CheXpert F1: chest radiographs); absent: every item."""
    weighted: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = field(
        default_factory=dict
    )
    """Metrics recomputed from item weights (resamples × items) → (resamples,): AUROC."""
    pair_counts: dict[str, Callable[[np.ndarray], tuple[int, int]]] = field(default_factory=dict)
    """An AUROC's (positives, negatives) over item indices: its interval is
    :func:`medlens.stats.auroc.auroc_interval`, not the percentile one."""
    clusters: np.ndarray | None = None
