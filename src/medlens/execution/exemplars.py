"""Few-shot exemplars: solved items from another split of the same benchmark.

A loader names its exemplar split with a module attribute ``EXEMPLAR_SPLIT`` (MMLU ``dev``,
PubMedQA, VQA-RAD and SLAKE ``train``); loaders whose spec is one file name the exemplar file
with ``exemplar_spec(spec) -> str`` (MedQA, MedMCQA: the release's train file beside the
evaluated one). ``--exemplars SPEC`` overrides both. Exemplars are chosen once per run, seeded,
from the item's own ``subject`` when the pool has enough of it (MMLU's convention), and never
include an evaluated question: pool items whose normalised question and options equal an
evaluated item's are dropped whatever their id (ids repeat across splits).
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.core.specs import Spec

GROUP_AXIS = "subject"
"""Exemplars come from the item's own value of this axis when the pool has K of it."""


@dataclass(frozen=True)
class Exemplars:
    """The exemplars of one run: K per group, and the spec they were read from."""

    spec: str
    k: int
    by_group: dict[str, tuple[Item, ...]] = field(default_factory=dict)
    """Group value → exemplars; key "" is the fallback drawn from the whole pool."""

    def for_item(self, item: Item) -> tuple[Item, ...]:
        return self.by_group.get(item.meta.get(GROUP_AXIS, ""), self.by_group[""])

    def ids(self) -> dict[str, list[str]]:
        """Group → exemplar ids, as recorded in the run spec."""
        return {group: [e.id for e in chosen] for group, chosen in sorted(self.by_group.items())}


def exemplar_spec(spec: Spec) -> Spec:
    """The spec of the benchmark's exemplar split, or SpecError when the loader names none."""
    from medlens.sources import SOURCES

    module = SOURCES.module_of(spec.name)
    named = getattr(module, "exemplar_spec", None)
    if named is not None:
        found: Spec = named(spec)
        return found
    split = getattr(module, "EXEMPLAR_SPLIT", None)
    if split is None:
        raise SpecError(
            f"--strategy few-shot: {spec.name} names no exemplar split; "
            "give one with --exemplars SPEC"
        )
    return Spec(spec.name, spec.argument, {**spec.options, "split": split})


def choose_exemplars(
    pool: Iterable[Item], evaluated: Sequence[Item], k: int, seed: int, spec: str
) -> Exemplars:
    """K seeded exemplars per subject (and K overall) from `pool`, none of them evaluated."""
    taken = {_question_key(item) for item in evaluated}
    usable = [item for item in pool if item.answer is not None and _question_key(item) not in taken]
    if len(usable) < k:
        raise SpecError(
            f"--strategy few-shot:{k}: {spec} has {len(usable)} solved items that are not "
            f"evaluated; {k} are needed"
        )
    groups: dict[str, list[Item]] = {"": usable}
    for item in usable:
        if GROUP_AXIS in item.meta:
            groups.setdefault(item.meta[GROUP_AXIS], []).append(item)
    chosen = {
        name: tuple(_draw(members, k, seed, name))
        for name, members in groups.items()
        if len(members) >= k
    }
    return Exemplars(spec=spec, k=k, by_group=chosen)


def _draw(members: list[Item], k: int, seed: int, group: str) -> list[Item]:
    digest = hashlib.sha256(f"{seed}\0{group}".encode()).digest()
    ordered = sorted(members, key=lambda item: item.id)
    return random.Random(int.from_bytes(digest[:8], "big")).sample(ordered, k)


def _question_key(item: Item) -> str:
    text = " ".join([item.question, *item.options.values()])
    return re.sub(r"\W+", " ", text.casefold()).strip()


def load_exemplars(
    bench: Spec, override: Spec | None, evaluated: Sequence[Item], k: int, seed: int
) -> Exemplars:
    """Read the exemplar split (or `override`) and choose K exemplars per group."""
    from medlens.sources import load_benchmark

    spec = override or exemplar_spec(bench)
    pool = load_benchmark(spec).items()
    return choose_exemplars(pool, evaluated, k, seed, str(spec) if override else spec.canonical())


REASONING_FIELD = "reasoning"
"""The exemplar's worked reasoning (``meta["reasoning"]``; a top-level ``reasoning`` field of a
jsonl exemplar file lands there), shown before its answer under chain-of-thought."""


def answer_turn(item: Item, with_reasoning: bool = False) -> str:
    """The solved exemplar's answer, written in the format the instruction asks for; under
    chain-of-thought (`with_reasoning`) its worked reasoning comes first."""
    gold = item.answer
    if item.kind == "multi_choice" and isinstance(gold, str):
        answer = "Answer: " + ", ".join(gold)
    elif isinstance(gold, tuple):
        answer = "Answer: " + ", ".join(str(list(box)) for box in gold)
    else:
        answer = f"Answer: {gold}"
    reasoning = item.meta.get(REASONING_FIELD, "").strip()
    return f"{reasoning}\n{answer}" if with_reasoning and reasoning else answer


def require_reasoning(exemplars: Exemplars, strategy: str) -> None:
    """Chain-of-thought exemplars must carry worked reasoning: bare ones are refused, not sent."""
    chosen = {e.id: e for group in exemplars.by_group.values() for e in group}
    bare = sorted(i for i, e in chosen.items() if not e.meta.get(REASONING_FIELD, "").strip())
    if bare:
        shown = ", ".join(bare[:3]) + (f" and {len(bare) - 3} more" if len(bare) > 3 else "")
        raise SpecError(
            f"--strategy {strategy}: exemplars of {exemplars.spec} carry no worked reasoning "
            f"(item {shown}); chain-of-thought exemplars need it: give --exemplars jsonl:FILE "
            f"whose items have a {REASONING_FIELD!r} field, or drop cot"
        )


def exemplars_of_run(recorded: dict[str, Any]) -> Exemplars | None:
    """The exemplars a run recorded (``spec["strategy"]["exemplars"]``), read again from their
    spec by id; None when the run has none or their benchmark cannot be read here."""
    from medlens.core.errors import MedlensError
    from medlens.runs.recorded import stored_spec
    from medlens.sources import load_benchmark

    chosen = recorded.get("exemplars")
    if not chosen:
        return None
    try:
        pool = {item.id: item for item in load_benchmark(stored_spec(chosen["spec"])).items()}
        by_group = {g: tuple(pool[i] for i in ids) for g, ids in chosen["ids"].items()}
    except (MedlensError, KeyError):
        return None
    k = len(next(iter(by_group.values()), ()))
    return Exemplars(spec=chosen["spec"], k=k, by_group=by_group)
