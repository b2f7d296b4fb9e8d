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
    intervals: dict[str, Callable[[np.ndarray, np.ndarray], tuple[float, float]]] = field(
        default_factory=dict
    )
    """A weighted metric's interval over item indices and their images: an AUROC's is
    :func:`medlens.stats.auroc.auroc_ci`."""
    clusters: np.ndarray | None = None
