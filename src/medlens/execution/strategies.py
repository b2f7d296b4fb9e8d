"""Prompting strategies: zero-shot, few-shot exemplars, chain-of-thought, self-consistency.

``--strategy`` joins parts with ``+`` (``few-shot:5+cot``, ``cot+self-consistency:5``). A strategy
is part of the run spec: a few-shot run and a zero-shot run of one model are different runs.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import SpecError

SELF_CONSISTENCY_TEMPERATURE = 0.7
"""Sampling temperature of self-consistency draws (Wang et al. 2023 sample at 0.5–0.7)."""

COT_INSTRUCTION = (
    "Think step by step and explain your reasoning first. Then give your final answer on the "
    "last line, starting with 'Answer:'."
)

_FINAL_LINE = re.compile(r"^\W*(?:final\s+answer|answer)\s*(?:is)?\s*[:：]", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Strategy:
    """How each item is asked: exemplars before it, reasoning first, several sampled answers."""

    few_shot: int = 0
    """Exemplars (solved items from another split) shown before the item; 0: none."""
    cot: bool = False
    """Ask for reasoning before a final 'Answer:' line, and read only that line."""
    samples: int = 1
    """Self-consistency: answers drawn per item (temperature > 0, distinct seeds); 1: one."""

    @property
    def text(self) -> str:
        """The canonical ``--strategy`` text (``zero-shot`` when nothing is set)."""
        parts = [f"few-shot:{self.few_shot}"] if self.few_shot else []
        parts += ["cot"] if self.cot else []
        parts += [f"self-consistency:{self.samples}"] if self.samples > 1 else []
        return "+".join(parts) or "zero-shot"

    @property
    def is_zero_shot(self) -> bool:
        return self.text == "zero-shot"


ZERO_SHOT = Strategy()


def parse_strategy(text: str) -> Strategy:
    """``zero-shot|few-shot:K|cot|self-consistency:K`` joined by ``+`` → a :class:`Strategy`."""
    values: dict[str, Any] = {}
    for part in (p.strip() for p in text.split("+")):
        name, _, count = part.partition(":")
        if name in values or (name == "zero-shot" and len(text.split("+")) > 1):
            raise SpecError(f"--strategy {text!r}: {name!r} given twice or combined with zero-shot")
        if name in ("zero-shot", "cot") and not count:
            values[name] = True
        elif name in ("few-shot", "self-consistency"):
            values[name] = _count(text, part, count)
        else:
            raise SpecError(
                f"--strategy {text!r}: unknown part {part!r} "
                "(expected zero-shot, few-shot:K, cot, self-consistency:K, joined by +)"
            )
    return Strategy(
        few_shot=values.get("few-shot", 0),
        cot=bool(values.get("cot")),
        samples=values.get("self-consistency", 1),
    )


def recorded_strategy(spec: Mapping[str, Any]) -> Strategy:
    """The strategy a run's spec recorded (``spec["strategy"]["name"]``; zero-shot when absent)."""
    return parse_strategy(str((spec.get("strategy") or {}).get("name", "zero-shot")))


def _count(text: str, part: str, count: str) -> int:
    if not count.isdigit() or int(count) < 1:
        raise SpecError(f"--strategy {text!r}: {part!r} needs a whole number K ≥ 1 after ':'")
    return int(count)


def final_answer_text(output: str) -> str:
    """What extraction reads under chain-of-thought: the last 'Answer:' line onwards, else all."""
    matches = list(_FINAL_LINE.finditer(output))
    return output[matches[-1].start() :] if matches else output


def sample_params(params: Mapping[str, Any], seed: int, index: int) -> dict[str, Any]:
    """Generation parameters of self-consistency draw `index`: sampled, with its own seed."""
    return {
        **params,
        "temperature": SELF_CONSISTENCY_TEMPERATURE,
        "seed": seed * 1000 + index,
    }


@dataclass(frozen=True)
class Vote:
    """The majority of several extracted answers."""

    winner: int | None
    """Index of the first draw giving the majority answer; None when no draw was read."""
    votes: dict[str, int]
    agreement: float
    """Share of the draws that gave the majority answer (0 when none was read)."""
    tie: bool = False
    """Two or more answers shared the top count: the winner is the first drawn of them."""


def majority_vote(answers: Sequence[str | None]) -> Vote:
    """Most frequent read answer; ties go to the answer drawn first (deterministic)."""
    counts = Counter(a for a in answers if a is not None)
    if not counts:
        return Vote(None, {}, 0.0)
    top = max(counts.values())
    winner = next(i for i, a in enumerate(answers) if a is not None and counts[a] == top)
    tie = sum(1 for count in counts.values() if count == top) > 1
    return Vote(winner, dict(counts.most_common()), top / len(answers), tie)


def consistency_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Mean agreement of self-consistency votes with a t interval; None without votes."""
    shares = [float(r["agreement"]) for r in records if r.get("agreement") is not None]
    if not shares:
        return None
    import numpy as np
    from scipy import stats

    values = np.asarray(shares)
    mean = float(values.mean())
    if values.size > 1 and values.std() > 0:
        low, high = stats.t.interval(0.95, values.size - 1, mean, stats.sem(values))
    else:  # every draw agreed the same way: the t interval is undefined, report the point
        low = high = mean
    unanimous = int((values == 1.0).sum())
    return {
        "n": int(values.size),
        "agreement": mean,
        "ci": [max(0.0, float(low)), min(1.0, float(high))],
        "unanimous": unanimous,
        "ties": sum(1 for r in records if r.get("tie")),
    }
