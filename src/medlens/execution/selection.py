"""Choosing items before a run: filters, id lists, difficulty and contamination drops, samples.

Used by ``medlens subset`` (a frozen benchmark file) and ``medlens run --where/--sample/
--stratify/--exclude`` (a one-off selection recorded in the run spec). Order of operations:
``--where`` (the ``slice`` filter syntax, parsed by :func:`medlens.analysis.slices.parse_where`), then
``--include``/``--exclude`` (one id per line), ``--drop-solved-by`` and ``--drop-flagged``; the
items left are the population; ``--sample N`` / ``--fraction F`` then draws from it.

Proportional allocation over strata (``--stratify``): stratum s of size n_s gets quota
N·n_s/n; each gets the whole part of its quota, and the seats left go to the largest remainders
(Hamilton's largest-remainder method; ties: larger stratum, then stratum key order). Within a
stratum the items are a uniform sample without replacement drawn with
``random.Random(f"{seed}:{stratum}")``. Selected items keep the source order.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.notation import split_list
from medlens.core.specs import Spec
from medlens.core.where import Condition, check_axes, check_values, parse_where

MISSING = ""
"""Stratum value of an item that lacks the axis."""


FLAG_Q = 0.1
"""``subset --q``: an item audit's flags are dropped at Benjamini–Hochberg q ≤ this."""


@dataclass(frozen=True)
class Recipe:
    """What to keep; recorded as is in ``subset.json`` and in a run's spec."""

    where: str | None = None
    sample: int | None = None
    fraction: float | None = None
    stratify: tuple[str, ...] = ()
    seed: int = 0
    include: str | None = None
    exclude: str | None = None
    drop_solved_by: tuple[str, ...] = ()
    drop_flagged: str | None = None
    flag_q: float = FLAG_Q
    """The q at which an item audit's flags are dropped (``--q``)."""

    def check(self) -> None:
        if not 0.0 < self.flag_q < 1.0:
            raise SpecError(f"--q {self.flag_q:g}: expected a false-discovery rate in (0, 1)")
        if self.sample is not None and self.fraction is not None:
            raise SpecError("--sample and --fraction: give one of them")
        if self.sample is not None and self.sample < 1:
            raise SpecError(f"--sample {self.sample}: expected at least 1")
        if self.fraction is not None and not 0.0 < self.fraction <= 1.0:
            raise SpecError(f"--fraction {self.fraction:g}: expected a share in (0, 1]")
        if self.stratify and self.sample is None and self.fraction is None:
            raise SpecError(
                "--stratify: needs --sample N (or, with medlens build subset, --fraction F)"
            )

    @property
    def empty(self) -> bool:
        return self == Recipe(seed=self.seed)

    def to_json(self) -> dict[str, Any]:
        """The recipe, with the sha256 and line count of each id file (it may change later)."""
        out: dict[str, Any] = {
            "where": self.where,
            "sample": self.sample,
            "fraction": self.fraction,
            "stratify": list(self.stratify),
            "seed": self.seed,
            "include": _file_record(self.include),
            "exclude": _file_record(self.exclude),
            "drop_solved_by": list(self.drop_solved_by),
            "drop_flagged": _file_record(self.drop_flagged),
        }
        if self.drop_flagged:
            out["drop_flagged"]["q"] = self.flag_q
        return out


def _file_record(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    data = Path(path).read_bytes()
    return {"path": path, "sha256": hashlib.sha256(data).hexdigest()}


def parse_stratify(text: str | None) -> tuple[str, ...]:
    return tuple(split_list(text))


class Filter:
    """The item-level part of a recipe (everything before sampling), ready to test items."""

    def __init__(self, recipe: Recipe, known_axes: Sequence[str]) -> None:
        recipe.check()
        check_axes(recipe.stratify, known_axes, "--stratify")
        self.recipe = recipe
        self.conditions: tuple[Condition, ...] = (
            parse_where(recipe.where, known_axes) if recipe.where else ()
        )
        self.include = read_ids(Path(recipe.include)) if recipe.include else None
        self.listed_exclude = read_ids(Path(recipe.exclude)) if recipe.exclude else set()
        self.exclude = self.listed_exclude | solved_by_all(recipe.drop_solved_by)
        if recipe.drop_flagged:
            self.exclude |= flagged_ids(Path(recipe.drop_flagged), recipe.flag_q)
        self._seen: set[str] | None = set() if self.include or self.listed_exclude else None
        self._values: dict[str, set[str]] = {c.axis: set() for c in self.conditions}

    def keeps(self, item_id: str, meta: Mapping[str, str]) -> bool:
        if self._seen is not None:
            self._seen.add(item_id)
        for axis, seen in self._values.items():
            seen.add(meta.get(axis) or "")
        if self.include is not None and item_id not in self.include:
            return False
        if item_id in self.exclude:
            return False
        return all(matches(condition, meta) for condition in self.conditions)

    def stratum(self, meta: Mapping[str, str]) -> tuple[str, ...]:
        return tuple(meta.get(axis, MISSING) for axis in self.recipe.stratify)

    def check_ids(self, source: str) -> None:
        """After every item was seen: refuse --where values and --include/--exclude ids that
        are no item's in `source` (a typo would silently change the evaluated set)."""
        check_values(self.conditions, self._values)
        listed = (("--include", self.recipe.include, self.include or set()),
                  ("--exclude", self.recipe.exclude, self.listed_exclude))  # fmt: skip
        for flag, path, ids in listed:
            unknown = sorted(ids - (self._seen or set()))
            if unknown:
                shown = ", ".join(repr(i) for i in unknown[:5])
                more = f", … ({len(unknown)} in all)" if len(unknown) > 5 else ""
                raise InputError(
                    path, None,
                    f"{flag}: {len(unknown)} of {len(ids)} ids are not items of {source}: {shown}{more}",
                )  # fmt: skip


def matches(condition: Condition, meta: Mapping[str, str]) -> bool:
    """As ``slices.apply_where``: a missing value never equals anything."""
    value = meta.get(condition.axis) or None
    hit = value is not None and value in condition.values
    return not hit if condition.negate else hit


def read_ids(path: Path) -> set[str]:
    """One item id per line; blank lines skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the id list ({exc})") from None
    return {line.strip() for line in text.splitlines() if line.strip()}


def solved_by_all(runs: Sequence[str]) -> set[str]:
    """Ids every listed run answered correctly (score 1); Med-CMR's difficulty filter."""
    if not runs:
        return set()
    from medlens.runs.view import RunView

    solved: set[str] | None = None
    for run in runs:
        records = RunView(Path(run)).records()
        correct = {i for i, r in records.items() if r.get("score") == 1.0}
        solved = correct if solved is None else solved & correct
    return solved or set()


def flagged_ids(path: Path, q: float = FLAG_Q) -> set[str]:
    """Items flagged in a ``medlens check contamination --json`` or ``medlens items audit --json``
    report (an item audit's at q ≤ `q`, see :func:`flag_reasons`)."""
    return set(flag_reasons(path, q))


def flag_reasons(path: Path, q: float = FLAG_Q) -> dict[str, list[str]]:
    """Item id → the flags that drop it. An item audit's rows carry a q value per tested flag
    (``items audit``): a row is dropped for the flags at q ≤ `q`, whatever q the audit itself
    flagged at. A contamination audit (``medlens check contamination --json``) has no q: its ``flagged``
    rows are dropped ("contamination")."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"cannot be read as a JSON report ({exc})") from None
    items = _audit_items(data)
    if isinstance(items, str):
        raise InputError(path, None, f"{items}; give the report of `medlens items audit --json` "
                                     f"or `medlens check contamination --json`")  # fmt: skip
    if not (isinstance(data, dict) and "runs" in data and "flags" in data):
        return {str(item["id"]): ["contamination"] for item in items if item.get("flagged")}
    out: dict[str, list[str]] = {}
    for index, item in enumerate(items):
        found = item.get("q")
        if not isinstance(found, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in found.values()
        ):
            raise InputError(path, f"items[{index}].q", "an item audit row without q values per "
                             "flag (an audit from an older medlens?); run `medlens items audit` "
                             "again")  # fmt: skip
        dropped = sorted(str(name) for name, value in found.items() if value <= q)
        if dropped:
            out[str(item["id"])] = dropped
    return out


JSON_KINDS = {"list": "list", "str": "string", "int": "number", "float": "number",
              "bool": "boolean", "NoneType": "null"}  # fmt: skip


def _audit_items(data: object) -> list[dict[str, object]] | str:
    """An audit report's items, or what the file is instead, in words."""
    if not isinstance(data, dict):
        kind = JSON_KINDS.get(type(data).__name__, "value")
        return f"it holds a JSON {kind}, not an audit report"
    items = data.get("items")
    if isinstance(items, dict) and "runs" in data and "fit" in data:
        return "it is a `medlens items fit` bank, not an audit report"
    if not isinstance(items, list):
        return "field 'items' is missing or not a list"
    for index, item in enumerate(items):
        if not isinstance(item, dict) or "id" not in item:
            return f"items[{index}] is not an item with an 'id'"
    return items


def allocate(sizes: Mapping[tuple[str, ...], int], total: int) -> dict[tuple[str, ...], int]:
    """Largest-remainder proportional allocation of ``total`` seats over strata."""
    population = sum(sizes.values())
    quotas = {key: total * size / population for key, size in sizes.items()}
    seats = {key: math.floor(quota) for key, quota in quotas.items()}
    left = total - sum(seats.values())
    order = sorted(sizes, key=lambda key: (-(quotas[key] - seats[key]), -sizes[key], key))
    for key in order[:left]:
        seats[key] += 1
    return seats


def sample_ids(
    strata: Mapping[tuple[str, ...], Sequence[str]],
    recipe: Recipe,
    where: str,
) -> set[str] | None:
    """The sampled ids (None = keep the whole population); ``where`` names the source."""
    population = sum(len(ids) for ids in strata.values())
    if recipe.sample is None and recipe.fraction is None:
        return None
    total = recipe.sample if recipe.sample is not None else round(recipe.fraction * population)  # type: ignore[operator]
    if total > population:
        raise InputError(
            where, None, f"--sample {total} is larger than the population ({population} items)"
        )
    seats = allocate({key: len(ids) for key, ids in strata.items()}, total)
    chosen: set[str] = set()
    for key, ids in strata.items():
        rng = random.Random(f"{recipe.seed}:{'|'.join(key)}")
        chosen.update(rng.sample(list(ids), seats[key]))
    return chosen


def select(
    items: Iterable[tuple[str, Mapping[str, str]]],
    recipe: Recipe,
    known_axes: Sequence[str],
    where: str,
) -> list[str]:
    """Ids kept by ``recipe`` in source order (for an in-memory list of items)."""
    keep = Filter(recipe, known_axes)
    strata: dict[tuple[str, ...], list[str]] = {}
    order: list[str] = []
    for item_id, meta in items:
        if keep.keeps(item_id, meta):
            strata.setdefault(keep.stratum(meta), []).append(item_id)
            order.append(item_id)
    keep.check_ids(where)
    chosen = sample_ids(strata, recipe, where)
    return order if chosen is None else [i for i in order if i in chosen]


# -- one-off selections of `medlens run`, and what a run records about its items' origin ------
def select_run_items(
    benchmark: Any,
    items: list[Any],
    where: str | None,
    sample: int | None,
    stratify: str | None,
    exclude: str | None,
    seed: int,
) -> tuple[list[Any], dict[str, Any] | None]:
    """The items ``run --where/--sample/--stratify/--exclude`` keeps, and the run-spec entry."""
    recipe = Recipe(
        where=where, sample=sample, stratify=parse_stratify(stratify), seed=seed, exclude=exclude
    )
    if recipe.empty:
        return items, None
    from medlens.core.fingerprint import describe

    full = describe(benchmark, items)
    # `kind` is an axis of slices and compare, so a run selects on it too
    kinds = (({**i.meta, "kind": i.kind}) for i in items)
    axes = (*full.axes, "kind")
    kept = set(select(((i.id, m) for i, m in zip(items, kinds, strict=True)), recipe, axes,
                      benchmark.spec))  # fmt: skip
    if not kept:
        raise SpecError(
            f"{benchmark.spec}: the selection keeps no items{_known_values(items, where)}"
        )
    selected = [item for item in items if item.id in kept]
    entry = {
        "recipe": recipe.to_json(),
        "n_items": len(selected),
        "source": {
            "n_items": full.n_items,
            "content_hash": full.content_hash,
            "content_hash_version": full.content_hash_version,
        },
    }
    return selected, entry


def _known_values(items: Sequence[Any], where: str | None) -> str:
    """The values of the axes `where` names, so a typo is visible (as `slice` lists them)."""
    if not where:
        return ""
    axes = sorted({key for item in items for key in item.meta} | {"kind"})
    known = []
    for axis in dict.fromkeys(c.axis for c in parse_where(where, axes)):
        seen = {str(i.kind if axis == "kind" else i.meta.get(axis) or "") for i in items}
        values = sorted(seen - {""})
        shown = ", ".join(values[:20]) + (f", … ({len(values)} values)" if len(values) > 20 else "")
        known.append(f"{axis}: {shown or 'no values'}")
    return " (known values: " + "; ".join(known) + ")"


def run_provenance(
    bench: Spec, content_hash: str, selection: dict[str, Any] | None
) -> dict[str, Any]:
    """Run-spec keys saying where the items came from: ``selection`` and/or ``subset``.

    Absent keys are left out, so runs without either keep the spec (and spec hash) they had.
    """
    from medlens.sources.sidecar import recorded_subset

    out: dict[str, Any] = {}
    if selection is not None:
        out["selection"] = selection
    elif (recorded := recorded_subset(bench, content_hash)) is not None:
        out["subset"] = recorded
    return out


def recipe_text(recipe: Mapping[str, Any]) -> str:
    """A recipe in one line: ``where modality=CT; sample 500 stratified by task; seed 0``."""
    parts = []
    if recipe.get("where"):
        parts.append(f"where {recipe['where']}")
    for key in ("include", "exclude", "drop_flagged"):
        if recipe.get(key):
            parts.append(f"{key.replace('_', '-')} {recipe[key]['path']}")
    if recipe.get("drop_solved_by"):
        parts.append(f"drop items solved by {', '.join(recipe['drop_solved_by'])}")
    size = recipe.get("sample") or recipe.get("fraction")
    if size is not None:
        stratified = recipe.get("stratify") or []
        how = f" stratified by {', '.join(stratified)}" if stratified else ""
        parts.append(f"sample {size}{how}, seed {recipe.get('seed', 0)}")
    return "; ".join(parts) or "all items"


def provenance_rows(spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """Report protocol rows for a run on a subset file or with a one-off selection."""
    rows = []
    if subset := spec.get("subset"):
        source = subset.get("source", {})
        rows.append((
            "subset",
            f"{subset.get('n_items')} of {source.get('n_items')} items of {source.get('spec')} "
            f"(source content hash {str(source.get('content_hash', ''))[:16]}): "
            + recipe_text(subset.get("recipe", {})),
        ))  # fmt: skip
    if selection := spec.get("selection"):
        source = selection.get("source", {})
        rows.append((
            "selection",
            f"{selection.get('n_items')} of {source.get('n_items')} items: "
            + recipe_text(selection.get("recipe", {})),
        ))  # fmt: skip
    return tuple(rows)
