"""``medlens items sample``: a design-based subset of a bank's benchmark, written as a subset.

The benchmark is read once to check it is the bank's (same content hash, same ids) and to learn
each item's axes and image; the design (:mod:`medlens.items.design`) draws units — single items
(``--unit item``, the default) or whole images (``--unit image``: the questions on one image form
one unit); the subset is written by ``medlens subset``'s writer, whose ``subset.json`` gains
``design``: method, ``unit``, bank (path, sha256), seed, axes, and per stratum its units (every
item's), the drawn ones and their inclusion probability. A run on the subset records the sidecar (``spec.subset.design``), so the
run carries its design to ``medlens estimate``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlens.builder.subset import Drawn, subset
from medlens.core.errors import InputError, SpecError
from medlens.core.fingerprint import describe
from medlens.core.items import CONTENT_HASH_VERSION, Item
from medlens.core.specs import Spec
from medlens.core.where import check_axes
from medlens.execution.selection import Recipe
from medlens.items import design, irt
from medlens.items.bank import Bank, read_bank
from medlens.sources import load_benchmark

UNITS = ("item", "image")
"""What the design draws: single items (the default) or images with all their questions."""
METHODS = {
    "item": "stratified sample of items, Neyman allocation on the bank's predictions",
    "image": "stratified sample of units (images), Neyman allocation on the bank's predictions",
}


def sample_subset(
    source: Spec,
    bank_path: Path,
    n: int,
    output: Path,
    seed: int = 0,
    axes: Sequence[str] = (),
    force: bool = False,
    unit: str = "item",
) -> dict[str, Any]:
    """Draw the sample and write the subset; returns the sidecar's content."""
    if n < 1:
        raise SpecError(f"--n {n}: expected at least 1")
    check_unit(unit)
    bank = read_bank(bank_path)
    benchmark = load_benchmark(source)
    items = list(benchmark.items())
    info = describe(benchmark, items)
    _check_bank(bank, info.content_hash, items, str(source))
    check_axes(axes, (*info.axes, "kind"), "--stratify")
    if n > len(items):
        raise SpecError(f"--n {n}: larger than {source} ({len(items)} items)")
    layout = _design(bank, items, n, seed, tuple(axes), unit)
    recipe = Recipe(sample=n, stratify=tuple(axes), seed=seed)
    ids = {
        i
        for stratum in layout["strata"].values()
        for u in stratum["sampled"]
        for i in stratum["units"][u]
    }
    return subset(source, output, recipe, force=force, drawn=Drawn(ids, layout, info.content_hash))


def check_unit(unit: str) -> None:
    """Refuse a sampling unit the design does not know."""
    if unit not in UNITS:
        raise SpecError(f"--unit {unit}: expected item or image")


def unit_keys(items: Sequence[Item], unit: str) -> list[str]:
    """Per item the key of its unit: its image (``image``; an item without one is its own
    unit), or nothing (``item``: every item is its own unit)."""
    if unit == "image":
        return [item.meta.get("image_id", "") for item in items]
    return ["" for _ in items]


def _check_bank(bank: Bank, content_hash: str, items: Sequence[Item], spec: str) -> None:
    expected = bank.benchmark.get("content_hash")
    if content_hash != expected:
        from medlens.core.fingerprint import older_hash_note

        now = older_hash_note(bank.benchmark, {"content_hash_version": CONTENT_HASH_VERSION})
        raise InputError(
            bank.path, None,
            f"the bank is of {bank.benchmark.get('spec')} (content {str(expected)[:12]}), not of "
            f"{spec} (content {content_hash[:12]}){now}",
        )  # fmt: skip
    if {item.id for item in items} != set(bank.ids):
        raise InputError(bank.path, None, f"the bank's item ids are not those of {spec}")


def _design(
    bank: Bank,
    items: Sequence[Item],
    n: int,
    seed: int,
    axes: tuple[str, ...],
    unit: str = "item",
) -> dict[str, Any]:
    """Strata, allocation and draw; the ``design`` entry of ``subset.json``."""
    ids = [item.id for item in items]
    units = design.units_of(ids, unit_keys(items, unit))
    column = {item_id: j for j, item_id in enumerate(bank.ids)}
    order = np.array([column[i] for i in ids])
    thetas = np.array([theta for theta, _ in bank.abilities.values()])
    p = irt.probability(
        thetas, bank.discrimination[order], bank.difficulty[order], bank.guess[order]
    )
    variance = dict(zip(ids, np.mean(p * (1 - p), axis=0).tolist(), strict=True))
    middle = dict(zip(ids, bank.predict(float(np.median(thetas)))[order].tolist(), strict=True))
    axis_key = {item.id: "|".join(_axis_value(item, axis) for axis in axes) for item in items}
    n_units = max(1, round(n * len(units) / len(ids)))
    strata = design.stratify(units, axis_key, middle, n_units)
    spread = {key: float(np.mean([np.sqrt(sum(variance[i] for i in units[u])) for u in members]))
              for key, members in strata.items()}  # fmt: skip
    seats = design.allocate({key: len(m) for key, m in strata.items()}, spread, n_units)
    drawn = design.draw(strata, seats, seed)
    layout = {
        key: design.Stratum(key, {u: units[u] for u in members}, drawn[key]).to_json()
        for key, members in strata.items()
    }
    return {
        "method": METHODS[unit],
        "unit": unit,
        "bank": {"path": str(bank.path.resolve()), "sha256": bank.sha256},
        "seed": seed,
        "stratify": list(axes),
        "n_requested": n,
        "population_n": len(ids),
        "strata": layout,
    }


def smallest_n(items: Sequence[Item], axes: Sequence[str], unit: str = "item") -> int:
    """The fewest items the design accepts on `items` stratified by `axes`: each stratum of the
    axes needs 2 units (items or images), and `n` items make about n × units / items units."""
    ids = [item.id for item in items]
    units = design.units_of(ids, unit_keys(items, unit))
    by_id = {item.id: item for item in items}
    sizes = Counter("|".join(_axis_value(by_id[members[0]], axis) for axis in axes)
                    for members in units.values())  # fmt: skip
    strata = sum(min(design.MIN_PER_STRATUM, size) for size in sizes.values())
    return math.ceil((strata - 0.5) * len(ids) / len(units))


def _axis_value(item: Item, axis: str) -> str:
    return item.kind if axis == "kind" and "kind" not in item.meta else item.meta.get(axis, "")
