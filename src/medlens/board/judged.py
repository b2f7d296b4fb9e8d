"""Judged scores on the board (``--score judge:NAME | combined:NAME``, layouts with ``--judge``).

Each run's rule scores (read fast by ``board.align``) are replaced on the judge's scope by its
verdicts, read through ``analysis.score_source`` (so every command reads a judge the same way):
``judge:`` keeps the scope's items with a verdict only, ``combined:`` every rule-scored item,
the scope's items without a usable verdict with their rule score (a judge never flatters). The scope is ``score_source.judged_scope``'s: answered
items (here: rule-scored) of the kinds the judge judges. Vectorised over item ids with pyarrow,
so 50 runs × 26,000 items cost well under a second beyond reading the judges' files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from medlens.analysis.score_source import (
    ScoreSource,
    coverage_counts,
    in_judged_kinds,
    judge_label_hook,
    read_judged_scores,
)


class RunRef(Protocol):
    """A board run (``board.align.BoardRun``): its folder and name."""

    @property
    def path(self) -> Path: ...

    @property
    def run(self) -> str: ...


@dataclass(frozen=True)
class JudgedCover:
    """Which items of the benchmark each run's judge covers, for coverage per cell."""

    meta: dict[str, np.ndarray]
    """Axes of every item of the benchmark (not only the aligned ones), ``kind`` included."""
    scope: dict[str, np.ndarray]
    """Run → items of the judged scope (bool, item order of `meta`)."""
    verdicts: dict[str, np.ndarray]
    """Run → items of the scope with a verdict."""
    coverage: dict[str, dict[str, Any]]
    """Run → ``score_source.coverage_of`` (verdicts, scope, share, warning)."""

    def cell(self, run: str, mask: np.ndarray) -> dict[str, int]:
        """Verdicts / scope of `run` on the items of `mask` (over every item)."""
        scope = self.scope[run] & mask
        return {"verdicts": int((scope & self.verdicts[run]).sum()), "scope": int(scope.sum())}


def judged_scores(
    runs: Sequence[RunRef],
    items: dict[str, Any],
    meta: dict[str, np.ndarray],
    scored: list[tuple[Any, np.ndarray]],
    source: ScoreSource,
) -> tuple[list[tuple[Any, np.ndarray]], JudgedCover]:
    """Per run (ids, scores) under `source`, and the judged cover of every run."""
    import pyarrow as pa
    import pyarrow.compute as pc

    assert source.judge is not None
    all_ids = pa.array(list(items), type=pa.string())
    kind_of = {item_id: item.kind for item_id, item in items.items()}
    eligible: dict[frozenset[str], np.ndarray] = {}
    out, scopes, verdicts, coverage = [], {}, {}, {}
    for run, (ids, scores) in zip(runs, scored, strict=True):
        judged = read_judged_scores(run.path, source.judge, kind_of, source)
        if judged.kinds not in eligible:
            eligible[judged.kinds] = np.array(
                [in_judged_kinds(item, judged.kinds) for item in items.values()], dtype=bool
            )
        rule_scored = _is_in(all_ids, ids)
        scope = eligible[judged.kinds] & rule_scored
        verdict_ids = pa.array(list(judged.scores), type=pa.string())
        values = np.fromiter(judged.scores.values(), dtype=float, count=len(judged.scores))
        has = scope & _is_in(all_ids, verdict_ids)
        scopes[run.run], verdicts[run.run] = scope, has
        keep = has if source.kind == "judge" else rule_scored
        kept_ids = all_ids.filter(pa.array(keep))
        rule_at = pc.index_in(kept_ids, value_set=ids).to_numpy(zero_copy_only=False)
        new = scores[rule_at.astype(np.intp)] if scores.size else np.zeros(0)
        judged_at = pc.index_in(kept_ids, value_set=verdict_ids)
        replace = _is_in(kept_ids, verdict_ids) & has[keep]
        if replace.any():
            at = judged_at.to_numpy(zero_copy_only=False)[replace].astype(np.intp)
            new = np.array(new, dtype=float)
            new[replace] = values[at]
        out.append((kept_ids, np.asarray(new, dtype=float)))
        missing = all_ids.filter(pa.array(scope & ~has)).to_pylist()
        reasons = [judged.missing.get(item_id, "not judged") for item_id in missing]
        coverage[run.run] = coverage_counts(
            judged, int(has.sum()), int(scope.sum()), run.run, source, reasons
        )
        coverage[run.run]["label"] = judge_label_hook(run.path, judged.name)
    return out, JudgedCover(meta, scopes, verdicts, coverage)


def _is_in(values: Any, value_set: Any) -> np.ndarray:
    import pyarrow.compute as pc

    return np.asarray(pc.is_in(values, value_set=value_set).to_numpy(zero_copy_only=False), bool)
