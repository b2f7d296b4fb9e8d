"""A judge stage's verdicts read fast: pyarrow reads only the fields the score tables need.

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

from medlens.judges.combine import failure_of


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
    file = folder / "judgements.jsonl"
    try:
        stat = file.stat()
    except OSError:
        return None
    state = (stat.st_size, stat.st_mtime_ns)
    key = str(file.resolve())
    cached = _CACHE.get(key)
    if cached is not None and cached[0] == state:
        return cached[1]
    dimensions = [str(d) for d in meta["protocol"].get("dimensions") or []]
    value = _read(file, dimensions)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = (state, value)
    return value


def _read(file: Path, dimensions: Sequence[str]) -> FastVerdicts | None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pajson

    points = pa.struct([(d, pa.float64()) for d in dimensions]) if dimensions else None
    fields = [("id", pa.string()), ("status", pa.string()), ("score", pa.float64()),
              ("by", pa.string()), ("failure", pa.string())]  # fmt: skip
    if points is not None:
        fields.append(("verdict", pa.struct([("scores", points)])))
    options = pajson.ParseOptions(
        explicit_schema=pa.schema(fields), unexpected_field_behavior="ignore"
    )
    try:
        table = pajson.read_json(file, parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None  # a torn line, a verdict of another shape: the store reads it
    ids = table["id"].combine_chunks()
    if ids.null_count or pc.count_distinct(ids).as_py() != len(ids):
        return None
    ok = pc.fill_null(pc.equal(table["status"], "ok"), False)
    scored = pc.and_(ok, pc.is_valid(table["score"]))
    score_ids = ids.filter(scored.combine_chunks()).to_pylist()
    values = table["score"].filter(scored).to_numpy().astype(float).tolist()
    out: dict[str, dict[str, float]] = {}
    if points is not None:
        judged = pc.and_(ok, pc.fill_null(pc.equal(table["by"], "judge"), False)).combine_chunks()
        rubric = pc.struct_field(table["verdict"].combine_chunks(), "scores")
        judged_ids = np.asarray(ids.filter(judged).to_pylist(), dtype=object)
        for d in dimensions:
            column = pc.struct_field(rubric, d).filter(judged)
            present = np.asarray(pc.is_valid(column).to_numpy(zero_copy_only=False), bool)
            numbers = column.to_numpy(zero_copy_only=False).astype(float)
            out[d] = dict(zip(judged_ids[present].tolist(), numbers[present].tolist(), strict=True))
    return FastVerdicts(dict(zip(score_ids, values, strict=True)), out, _missing(table, scored))


def _missing(table: Any, scored: Any) -> dict[str, str]:
    """Item id → failure of the lines that hold no verdict (the store's names for it)."""
    import pyarrow.compute as pc

    rest = table.filter(pc.invert(scored)).select(["id", "status", "failure"]).to_pylist()
    return {str(row["id"]): failure_of(row) for row in rest}
