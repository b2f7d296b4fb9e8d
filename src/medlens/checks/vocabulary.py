"""A benchmark's own vocabulary: the values its axes may take, and the parent of each tree level.

GMAI-MMBench's 18 clinical VQA tasks and 18 departments ship as ``data/vocabularies/gmai.json``
and apply to every ``gmai:`` benchmark; ``medlens check SPEC --vocabulary FILE`` applies a
user's own (same JSON shape: ``{"axes": {axis: [values]}, "tree": {child: parent}}``) to any
benchmark. The check names every axis value outside the vocabulary with its closest known
value, and pairs of observed values of a vocabulary axis that are near-duplicates of each other
(a misspelt department splits a slice in two); axes the vocabulary does not name are left to
the case/spacing check, since "Stage I" and "Stage II" are close spellings of distinct values. The tree maps a child level to its parent (``l2-category``
→ ``category``, ``sub-modality`` → ``modality``), which ``slice --by`` expands into levels.
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from medlens.checks.result import CheckResult
from medlens.core.errors import InputError

NEAR = 0.85
"""difflib ratio above which two values of one axis are called near-duplicates."""
_FOLD = re.compile(r"[\W_]+")
SHIPPED = {"gmai": "gmai.json"}
"""Loader name → the vocabulary file that ships for it."""
TREE_PREFIX = "tree:"
TREE_LEVELS = {
    "l2-category": "category",
    "sub-modality": "modality",
    "submodality": "modality",
    "metadata_submodality": "metadata_modality",
}
"""Child level → parent level of the lexical trees medlens knows (GMAI's category tree, MMBU's
and OmniMedVQA's modality → sub-modality); a vocabulary file's ``tree`` adds to them."""


@dataclass(frozen=True)
class Vocabulary:
    """Allowed values per axis and the parent of each tree level."""

    name: str
    axes: Mapping[str, tuple[str, ...]]
    tree: Mapping[str, str] = field(default_factory=dict)


def load_vocabulary(path: str | Path) -> Vocabulary:
    """Read a vocabulary JSON file; InputError names the file, axis and the duplicated value."""
    where = str(path)
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(where, None, "no such vocabulary file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(where, None, f"not a JSON vocabulary ({exc})") from None
    return parse_vocabulary(data, where)


def parse_vocabulary(data: Any, where: str) -> Vocabulary:
    """A :class:`Vocabulary` from its JSON object, every axis checked for duplicates."""
    if not isinstance(data, dict) or not isinstance(data.get("axes"), dict):
        raise InputError(where, "field 'axes'", "expected an object of axis → list of values")
    axes: dict[str, tuple[str, ...]] = {}
    for axis, values in data["axes"].items():
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise InputError(where, f"axes.{axis}", "expected a list of non-empty strings")
        seen: dict[str, str] = {}
        for value in values:
            key = _fold(value)
            if key in seen:
                problem = f"duplicate value {value!r} (same as {seen[key]!r})"
                raise InputError(where, f"axes.{axis}", problem)
            seen[key] = value
        axes[str(axis)] = tuple(values)
    tree = data.get("tree", {})
    if not isinstance(tree, dict) or not all(isinstance(v, str) for v in tree.values()):
        raise InputError(where, "field 'tree'", "expected an object of child level → parent")
    return Vocabulary(str(data.get("name", Path(where).stem)), axes, dict(tree))


def shipped_vocabulary(loader: str) -> Vocabulary | None:
    """The vocabulary that ships for a loader (GMAI-MMBench's), or None."""
    name = SHIPPED.get(loader)
    if name is None:
        return None
    text = resources.files("medlens").joinpath(f"data/vocabularies/{name}").read_text("utf-8")
    return parse_vocabulary(json.loads(text), f"medlens/data/vocabularies/{name}")


def vocabulary_check(axes: Mapping[str, Counter[str]], vocabulary: Vocabulary) -> CheckResult:
    """Values outside the vocabulary (with the closest known one) and near-duplicate values."""
    outside: dict[str, list[dict[str, Any]]] = {}
    near: dict[str, list[list[str]]] = {}
    for axis, allowed in vocabulary.axes.items():
        counter = axes.get(axis, Counter())
        known = {_fold(v) for v in allowed}
        strays = [v for v in sorted(counter) if v and _fold(v) not in known]
        if strays:
            outside[axis] = [
                {"value": v, "n": counter[v], "closest": _closest(v, allowed)} for v in strays
            ]
    for axis, allowed in vocabulary.axes.items():
        known = {_fold(v) for v in allowed}
        pairs = [p for p in near_duplicates(v for v in axes.get(axis, ()) if v)
                 if not all(_fold(v) in known for v in p)]  # fmt: skip
        if pairs:
            near[axis] = pairs
    details = _details(outside, near)
    data = {"vocabulary": vocabulary.name, "outside": outside, "near_duplicates": near}
    if not details:
        checked = ", ".join(a for a in vocabulary.axes if a in axes) or "no axis present"
        summary = f"every value in the {vocabulary.name} vocabulary ({checked})"
        return CheckResult("vocabulary", "pass", summary, data=data)
    summary = (
        f"{sum(len(v) for v in outside.values())} value(s) outside the {vocabulary.name} "
        f"vocabulary, {sum(len(v) for v in near.values())} near-duplicate pair(s)"
    )
    return CheckResult("vocabulary", "warn", summary, details, data)


def near_duplicates(values: Iterable[str]) -> list[list[str]]:
    """Pairs of distinct values whose folded spellings are close (difflib ratio ≥ NEAR)."""
    distinct = sorted(set(values))
    pairs = []
    for index, first in enumerate(distinct):
        for second in distinct[index + 1 :]:
            a, b = _fold(first), _fold(second)
            if a != b and difflib.SequenceMatcher(None, a, b).ratio() >= NEAR:
                pairs.append([first, second])
    return pairs


def _closest(value: str, allowed: Iterable[str]) -> str | None:
    folded = {_fold(v): v for v in allowed}
    found = difflib.get_close_matches(_fold(value), list(folded), n=1, cutoff=0.8)
    return folded[found[0]] if found else None


def _details(
    outside: Mapping[str, list[dict[str, Any]]], near: Mapping[str, list[list[str]]]
) -> tuple[str, ...]:
    lines = [
        f"{axis}: {row['value']!r} (n={row['n']}) is not in the vocabulary"
        + (f"; did you mean {row['closest']!r}?" if row["closest"] else "")
        for axis, rows in outside.items()
        for row in rows
    ]
    lines += [f"{axis}: {a!r} and {b!r} are near-duplicates" for axis, pairs in near.items()
              for a, b in pairs]  # fmt: skip
    return tuple(lines)


def _fold(value: str) -> str:
    return _FOLD.sub("", value.casefold())


def expand_levels(axes: Iterable[str], available: Iterable[str]) -> list[str]:
    """``tree:CHILD`` → its chain of parent levels present in `available`, root first, then
    CHILD (``tree:l2-category`` → ``category, l2-category``); other axes as given."""
    present = set(available)
    out: list[str] = []
    for axis in axes:
        if not axis.startswith(TREE_PREFIX):
            out.append(axis)
            continue
        chain = [axis[len(TREE_PREFIX) :]]
        while (parent := TREE_LEVELS.get(chain[0])) is not None and parent in present:
            if parent in chain:
                break
            chain.insert(0, parent)
        out.extend(chain)
    return out
