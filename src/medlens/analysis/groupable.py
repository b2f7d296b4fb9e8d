"""Which metadata fields `--by` groups by, and which of them an unknown-axis message lists.

Items keep every field their source had: ids (``qid``, ``img_id``), paths, JSON columns
(``organ_boxes``) and native names that only repeat a canonical axis (GMAI's "perceptual
granularity" beside ``granularity``). Grouping by an id or a path gives one cell per item, so
`--by` refuses those with a reason; the message for a mistyped axis lists only the fields worth
a table, one name per grouping.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from medlens.analysis.results import per_item_values
from medlens.core.errors import SpecError
from medlens.core.items import CANONICAL_AXES


def per_item_field(axis: str, values: np.ndarray) -> bool:
    """An id, a path or a JSON value per item: no groups to compare."""
    if axis in CANONICAL_AXES:
        return axis == "image_id"
    return per_item_values(axis, values)


def _repeats(values: np.ndarray, canonical: np.ndarray) -> bool:
    """`values` only renames `canonical` (one-to-one on every item)."""
    pairs = set(zip(values.tolist(), canonical.tolist(), strict=True))
    return len(pairs) == len(set(values.tolist())) == len(set(canonical.tolist()))


def listed_axes(meta: Mapping[str, np.ndarray]) -> list[str]:
    """The axes a message names: canonical ones first, then native fields that are neither
    per-item values nor another name of a canonical axis."""
    canonical = [axis for axis in CANONICAL_AXES if axis in meta and axis != "image_id"]
    native = [
        axis for axis in sorted(meta)
        if axis not in CANONICAL_AXES and not per_item_field(axis, meta[axis])
        and not any(_repeats(meta[axis], meta[c]) for c in canonical)
    ]  # fmt: skip
    return canonical + native


def check_by_axes(axes: Sequence[str], meta: Mapping[str, np.ndarray], flag: str = "--by") -> None:
    """Refuse an unknown axis (listing the useful ones) and a per-item field (saying why)."""
    for axis in axes:
        if axis in meta and not per_item_field(axis, meta[axis]):
            continue
        known = ", ".join(listed_axes(meta)) or "none"
        if axis not in meta:
            raise SpecError(f"{flag}: unknown axis {axis!r} (known axes: {known})")
        raise SpecError(
            f"{flag}: {axis!r} holds an id, a path or JSON per item, so every group would be "
            f"one item (known axes: {known})"
        )
