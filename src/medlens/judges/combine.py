"""One item's judged score from its judgement lines: repeats, the two orders of ``--swap``, and
why an item has no score. The single rule that results.json, the judged-score reader
(``verdicts.judged_item_scores``) and panels share, so every table shows the same numbers.

Repeats combine by majority (binary verdicts) or mean (rubric). An even split of binary
repeats is *unresolved* — no score, exactly as a panel's even split — so a tie is never 0.5 in
one table and 0 in another. With ``--swap``, an item whose reading changes with the order of
its options is an *order flip*: no score (the verdict depends on where the options stand, not on
the answer), counted. Items without a score are read by every command the same way
(``verdicts.read_verdicts``): left out of ``judge:NAME``, their rule score under ``combined:``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

BINARY = ("equivalence", "choice", "mmbu")
"""Protocols whose verdicts are 0/1 (majority of repeats); the others are rubrics (mean)."""
Line = Mapping[str, Any]


def protocol_kind(spec: Mapping[str, Any]) -> str:
    """``equivalence``, ``choice``, ``mmbu`` or ``rubric`` (built-in or file) of a judge.json."""
    name = str(spec["protocol"]["name"])
    return name if name in BINARY else "rubric"


@dataclass(frozen=True)
class ItemVerdict:
    score: float
    """In [0, 1]; NaN when the item has no verdict."""
    outcome: str
    """``ok``; ``order_flip``; ``unresolved`` (an even split of a panel or of binary repeats);
    or the failure of its lines
    (``error``, ``empty``, ``truncated``, ``unparseable``, ``out_of_scale``)."""
    flip: bool | None = None
    """With both orders parsed: whether the reading changed with the order; else None."""


def combine(kind: str, scores: Sequence[float]) -> float:
    """Majority for binary verdicts, mean for rubric scores; NaN when none or when binary
    verdicts split evenly (unresolved)."""
    if not scores:
        return float("nan")
    mean = float(np.mean(scores))
    if kind in BINARY:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else float("nan")
    return mean


def failure_of(line: Line) -> str:
    """Why a line holds no verdict (lines written before failures were named: their status)."""
    if line.get("failure"):
        return str(line["failure"])
    status = str(line.get("status"))
    return status if status in ("unresolved", "error") else "unparseable"


def _reading(kind: str, lines: Sequence[Line]) -> Any:
    """What the judge read in one order: the chosen letters (choice), else the score."""
    if kind == "choice":
        answers = Counter(str((line.get("verdict") or {}).get("answer")) for line in lines)
        ranked = answers.most_common()
        return ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else None
    return combine(kind, [float(line["score"]) for line in lines])


def item_verdict(kind: str, lines: Sequence[Line]) -> ItemVerdict:
    """The item's score and outcome from all its lines (every repeat and order)."""
    ok = [line for line in lines if line.get("status") == "ok" and line.get("score") is not None]
    if not ok:
        return ItemVerdict(math.nan, failure_of(lines[0]) if lines else "error")
    given = [line for line in ok if line.get("order") != "swapped"]
    swapped = [line for line in ok if line.get("order") == "swapped"]
    flip = None
    if given and swapped:
        flip = not _same(_reading(kind, given), _reading(kind, swapped))
        if flip:
            return ItemVerdict(math.nan, "order_flip", True)
    score = combine(kind, [float(line["score"]) for line in ok])
    return ItemVerdict(score, "unresolved" if math.isnan(score) else "ok", flip)


def _same(first: Any, second: Any) -> bool:
    """Two readings agree (two unresolved ones included)."""
    if isinstance(first, float) and isinstance(second, float):
        return first == second or (math.isnan(first) and math.isnan(second))
    return bool(first == second)
