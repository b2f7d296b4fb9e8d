"""Prompting strategies: zero-shot, few-shot exemplars, chain-of-thought, self-consistency,
ensemble refinement.

``--strategy`` joins parts with ``+`` (``few-shot:5+cot``, ``cot+self-consistency:5``,
``few-shot:5+ensemble-refinement:3``). A strategy is part of the run spec: a few-shot run and a
zero-shot run of one model are different runs. Ensemble refinement (Med-PaLM 2) implies
chain-of-thought: its K paths are sampled reasoning, and the refining request reasons too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.notation import tagged

SELF_CONSISTENCY_TEMPERATURE = 0.7
"""Sampling temperature of self-consistency draws (Wang et al. 2023 sample at 0.5–0.7)."""

COT_INSTRUCTION = (
    "Think step by step and explain your reasoning first. Then give your final answer on the "
    "last line, starting with 'Answer:'."
)

_FINAL_LINE = re.compile(
    r"^\W*(?:final\s+answer|answer)\s*(?:is)?\s*[:：]", re.IGNORECASE | re.MULTILINE
)


@dataclass(frozen=True)
class Strategy:
    """How each item is asked: exemplars before it, reasoning first, several sampled answers."""

    few_shot: int = 0
    """Exemplars (solved items from another split) shown before the item; 0: none."""
    cot: bool = False
    """Ask for reasoning before a final 'Answer:' line, and read only that line."""
    samples: int = 1
    """Self-consistency: answers drawn per item (temperature > 0, distinct seeds); 1: one."""
    refine: int = 0
    """Ensemble refinement: K sampled reasoning paths, then one request conditioned on them;
    0: none. Implies ``cot``."""

    @property
    def text(self) -> str:
        """The canonical ``--strategy`` text (``zero-shot`` when nothing is set)."""
        parts = [f"few-shot:{self.few_shot}"] if self.few_shot else []
        parts += ["cot"] if self.cot and not self.refine else []
        parts += [f"self-consistency:{self.samples}"] if self.samples > 1 else []
        parts += [f"ensemble-refinement:{self.refine}"] if self.refine else []
        return "+".join(parts) or "zero-shot"

    @property
    def requests_per_item(self) -> int:
        """Model calls per item: K draws (self-consistency), K paths + 1 (refinement), else 1."""
        return self.refine + 1 if self.refine else self.samples

    @property
    def samples_answers(self) -> bool:
        """Whether the strategy needs sampled answers (a backend honouring temperature/seed)."""
        return self.samples > 1 or self.refine > 0

    @property
    def is_zero_shot(self) -> bool:
        return self.text == "zero-shot"


ZERO_SHOT = Strategy()


def parse_strategy(text: str) -> Strategy:
    """``zero-shot|few-shot:K|cot|self-consistency:K|ensemble-refinement:K`` joined by ``+`` →
    a :class:`Strategy`."""
    values: dict[str, Any] = {}
    parts = [p.strip() for p in text.split("+")]
    for part in parts:
        name, count, _ = tagged(part)
        if name in values or (name == "zero-shot" and len(parts) > 1):
            raise SpecError(f"--strategy {text!r}: {name!r} given twice or combined with zero-shot")
        if name in ("zero-shot", "cot") and not count:
            values[name] = True
        elif name in ("few-shot", "self-consistency", "ensemble-refinement"):
            values[name] = _count(text, part, count)
        else:
            raise SpecError(
                f"--strategy {text!r}: unknown part {part!r} (expected zero-shot, few-shot:K, "
                "cot, self-consistency:K, ensemble-refinement:K, joined by +)"
            )
    if "self-consistency" in values and "ensemble-refinement" in values:
        raise SpecError(
            f"--strategy {text!r}: self-consistency and ensemble-refinement both sample "
            "answers; choose one"
        )
    refine = values.get("ensemble-refinement", 0)
    return Strategy(
        few_shot=values.get("few-shot", 0),
        cot=bool(values.get("cot")) or refine > 0,
        samples=values.get("self-consistency", 1),
        refine=refine,
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


def refinement_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Ensemble refinement: mean share of the K paths the refined answer agrees with (t
    interval), and how many refined answers no path gave; None without refined records."""
    refined = [r for r in records if r.get("path_agreement") is not None]
    if not refined:
        return None
    summary = _mean_share([float(r["path_agreement"]) for r in refined])
    summary["paths"] = int(refined[0].get("refined_from") or 0)
    summary["new_answer"] = sum(1 for r in refined if float(r["path_agreement"]) == 0.0)
    return summary


def consistency_summary(records: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Mean agreement of self-consistency votes with a t interval; None without votes."""
    shares = [float(r["agreement"]) for r in records if r.get("agreement") is not None]
    if not shares:
        return None
    summary = _mean_share(shares)
    summary["ties"] = sum(1 for r in records if r.get("tie"))
    return summary


def _mean_share(shares: list[float]) -> dict[str, Any]:
    """n, mean, t interval (a point when every share is equal) and count of shares of 1."""
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
    }
