"""A stratified sample of sampling units (single items, or images with their questions) and its
inclusion probabilities (numbers and ids only).

Units (:func:`units_of`, from one key per item): with image keys, items that share an
``image_id`` form one unit (a cluster), so the estimator's variance sees questions on one picture
together; an item without a key is its own unit (with no keys at all, every item is one). A unit belongs to
the stratum of its first item. Strata: the benchmark's axes (``--stratify``) crossed with bins of
predicted difficulty (equal-size bins of the bank's predicted share right at the calibration
runs' median ability; 1 to 5 bins, about one per 8 units the axis stratum expects). Allocation
(Neyman): units per stratum ∝ units × the bank's predicted residual standard deviation of a unit
(at least half the mean, so no stratum is starved when a new model behaves unlike the bank), at
least 2 per stratum (so its variance can be estimated), at most all of them. Within a stratum a
uniform sample without replacement with ``random.Random(f"{seed}:{stratum}")``: every unit of
stratum h has inclusion probability m_h / M_h. The design records every stratum's units (so every
item's inclusion probability, sampled or not) and which were drawn.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from medlens.core.errors import SpecError

MAX_BINS = 5
UNITS_PER_BIN = 8
MIN_PER_STRATUM = 2
FLOOR_SHARE = 0.5


@dataclass(frozen=True)
class Stratum:
    """One stratum of the design and the units drawn from it."""

    key: str
    units: dict[str, list[str]]
    """Unit → its item ids, for every unit of the stratum (population)."""
    sampled: list[str]
    """The drawn units."""

    @property
    def inclusion_probability(self) -> float:
        return len(self.sampled) / len(self.units)

    def to_json(self) -> dict[str, object]:
        return {
            "population_units": len(self.units),
            "population_items": sum(len(ids) for ids in self.units.values()),
            "sampled_units": len(self.sampled),
            "inclusion_probability": round(self.inclusion_probability, 12),
            "units": self.units,
            "sampled": self.sampled,
        }


def units_of(ids: Sequence[str], clusters: Sequence[str]) -> dict[str, list[str]]:
    """Unit key → item ids, in first-appearance order."""
    units: dict[str, list[str]] = {}
    for item_id, cluster in zip(ids, clusters, strict=True):
        units.setdefault(cluster or item_id, []).append(item_id)
    return units


def stratify(
    units: Mapping[str, list[str]],
    axis_key: Mapping[str, str],
    predicted: Mapping[str, float],
    n_units: int,
) -> dict[str, list[str]]:
    """Stratum key (``AXES#bin``) → units; `axis_key` and `predicted` (share right) per item."""
    by_axis: dict[str, list[str]] = {}
    for unit, ids in units.items():
        by_axis.setdefault(axis_key[ids[0]], []).append(unit)
    total = len(units)
    strata: dict[str, list[str]] = {}
    for key in sorted(by_axis):
        members = by_axis[key]
        expected = n_units * len(members) / total
        bins = max(
            1, min(MAX_BINS, int(expected // UNITS_PER_BIN), len(members) // MIN_PER_STRATUM)
        )
        ordered = sorted(
            members, key=lambda u: (float(np.mean([predicted[i] for i in units[u]])), u)
        )
        for b, chunk in enumerate(np.array_split(np.arange(len(ordered)), bins)):
            strata[f"{key}#{b + 1}"] = [ordered[k] for k in chunk]
    return strata


def allocate(sizes: Mapping[str, int], spread: Mapping[str, float], total: int) -> dict[str, int]:
    """Neyman allocation of `total` units (floor at half the mean spread; 2 ≤ m_h ≤ M_h)."""
    minimum = {key: min(MIN_PER_STRATUM, size) for key, size in sizes.items()}
    if total < sum(minimum.values()):
        raise SpecError(
            f"--n: {total} units are too few for {len(sizes)} strata (each needs "
            f"{MIN_PER_STRATUM}); ask for more items or stratify by fewer axes"
        )
    if total > sum(sizes.values()):
        raise SpecError(f"--n: larger than the population ({sum(sizes.values())} units)")
    floor = FLOOR_SHARE * float(np.mean(list(spread.values()))) or 1.0
    weight = {key: sizes[key] * max(spread[key], floor) for key in sizes}
    seats = dict(minimum)
    while (left := total - sum(seats.values())) > 0:
        open_keys = [k for k in sizes if seats[k] < sizes[k]]
        scale = sum(weight[k] for k in open_keys)
        quota = {
            k: weight[k] / scale * (left + sum(seats[j] for j in open_keys)) - seats[k]
            for k in open_keys
        }
        best = max(open_keys, key=lambda k: (quota[k], sizes[k], k))
        grant = max(1, min(math.floor(quota[best]), sizes[best] - seats[best], left))
        seats[best] += grant
    return seats


def draw(
    strata: Mapping[str, list[str]], seats: Mapping[str, int], seed: int
) -> dict[str, list[str]]:
    """A uniform sample of `seats[h]` units in each stratum h (in the stratum's unit order)."""
    drawn: dict[str, list[str]] = {}
    for key, members in strata.items():
        rng = random.Random(f"{seed}:{key}")
        chosen = set(rng.sample(range(len(members)), seats[key]))
        drawn[key] = [members[k] for k in sorted(chosen)]
    return drawn
