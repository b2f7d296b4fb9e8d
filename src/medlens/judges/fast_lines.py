"""A judge stage's verdicts read fast: the run view's columns (``runs.judgements``, pyarrow where
that reads as the store does) hold only the fields the score tables need.

A board of 50 runs with a judge on 4,000 items each holds 200,000 judgement lines; reading them
line by line through the judge store costs several seconds. When a stage has one repeat and its
``judgements.jsonl`` parses whole with one line per item (what a finished stage holds after the
store's compaction), each item's verdict is that line: its ``score`` (``ok`` lines only: the
stage's own item score, equal to ``verdicts.judged_item_scores`` and to the results.json judge
section) and its rubric points (``verdict.scores``); a line of another status is an item without
a verdict, named by its failure. Anything else — repeats, a torn or repeated line, an unreadable
file — returns None, and ``verdicts.read_verdicts`` (the one reader every command uses) reads
the store through ``combine.item_verdict``, whose rules decide.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.judges.combine import failure_of
from medlens.runs.columns import FLOAT, STR, Kind
from medlens.runs.judgements import judgement_columns
from medlens.runs.layout import judgements_file


@dataclass(frozen=True)
class FastVerdicts:
    scores: dict[str, float]
    """Item id → the ok line's score in [0, 1]."""
    points: dict[str, dict[str, float]]
    """Rubric dimension → item id → points (ok judge lines with every dimension)."""
    missing: dict[str, str]
    """Item id → why its line holds no verdict (``combine.failure_of``'s words)."""


_CACHE: dict[str, tuple[tuple[int, int], FastVerdicts | None]] = {}


def fast_verdicts(folder: Path, meta: Mapping[str, Any]) -> FastVerdicts | None:
    """The stage's verdicts by the fast path, or None when only the store may read it."""
    if int(meta.get("repeats") or 1) != 1:
        return None
    try:
        stat = judgements_file(folder).stat()
    except OSError:
        return None
    state = (stat.st_size, stat.st_mtime_ns)
    key = str(judgements_file(folder).resolve())
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == state:
        return cached[1]
    dimensions = [str(d) for d in meta["protocol"].get("dimensions") or []]
    value = _read(folder, dimensions)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = (state, value)
    return value


def _read(folder: Path, dimensions: Sequence[str]) -> FastVerdicts | None:
    fields: dict[str, Kind] = {"status": STR, "score": FLOAT, "by": STR, "failure": STR}
    fields.update({f"verdict.scores.{d}": FLOAT for d in dimensions})
    columns = judgement_columns(folder, fields)
    if columns is None:
        return None  # a torn line, repeats, a verdict of another shape: the store reads it
    ids = np.asarray(columns.keys, dtype=object)
    ok = np.array([status == "ok" for status in columns.strings["status"]], dtype=bool)
    score = columns.floats["score"]
    scored = ok & score.present
    judged = ok & np.array([by == "judge" for by in columns.strings["by"]], dtype=bool)
    points: dict[str, dict[str, float]] = {}
    for d in dimensions:
        column = columns.floats[f"verdict.scores.{d}"]
        rated = judged & column.present
        points[d] = dict(zip(ids[rated].tolist(), column.values[rated].tolist(), strict=True))
    scores = dict(zip(ids[scored].tolist(), score.values[scored].tolist(), strict=True))
    missing = {
        str(ids[i]): failure_of(
            {"status": columns.strings["status"][i], "failure": columns.strings["failure"][i]}
        )
        for i in np.flatnonzero(~scored).tolist()
    }
    return FastVerdicts(scores, points, missing)
