"""A run's scored items as parallel arrays, and the statistics of one cell of them (n, score, CI, chance, rates)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.scoring.item_scores import ZERO_ONE_SECONDARY
from medlens.scoring.metrics import random_baseline, secondary_baselines
from medlens.stats.bootstrap import group_spread
from medlens.stats.cells import is_small, one_image_note
from medlens.stats.intervals import Spread, chance_corrected, chance_p

STATUSES = ("ok", "unparsed", "refused", "empty")


@dataclass(frozen=True)
class ScoreTable:
    """One row per item that has a record, as parallel numpy arrays."""

    ids: list[str]
    score: np.ndarray
    """Main score; NaN for errored items and items without gold."""
    vlmeval: np.ndarray
    random: np.ndarray
    status: np.ndarray
    """`ok`/`unparsed`/`refused`/`empty`, or `error`."""
    cluster: np.ndarray
    meta: dict[str, np.ndarray]
    secondary: dict[str, np.ndarray] = field(default_factory=dict)
    """Secondary per-item metrics (jaccard, token_f1 …); NaN where an item has none."""
    secondary_random: dict[str, np.ndarray] = field(default_factory=dict)
    """Their chance levels per item (NaN: none, as for open answers)."""
    scope: np.ndarray | None = None
    """Under a judged score source (``--score judge:NAME|combined:NAME``): True for items of
    the judge's scope, whose coverage (verdicts / scope) every cell reports; None for rules."""
    finish: np.ndarray | None = None
    """The backend's finish reason (``length``: cut at the token cap); "" when it gave none."""

    @property
    def scored(self) -> np.ndarray:
        return ~np.isnan(self.score)

    @cached_property
    def cluster_codes(self) -> np.ndarray:
        """Integer image codes (the same partition as `cluster`, computed once, not per cell)."""
        return value_codes(self.cluster)[1]

    @cached_property
    def _meta_codes(self) -> dict[str, tuple[list[str], np.ndarray]]:
        return {}

    def meta_codes(self, key: str) -> tuple[list[str], np.ndarray]:
        """``value_codes(self.meta[key])``, computed once per axis (results.json's breakdown
        and its per-axis cells both ask for every axis)."""
        if key not in self._meta_codes:
            self._meta_codes[key] = value_codes(self.meta[key])
        return self._meta_codes[key]

    @cached_property
    def status_is(self) -> dict[str, np.ndarray]:
        """Status → which rows have it (compared once: a results.json asks for every cell)."""
        return {status: self.status == status for status in (*STATUSES, "error")}


def value_codes(values: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The distinct values in sorted order and each row's index among them: ``np.unique(values
    .astype(str), return_inverse=True)`` for an object array of strings, by a dictionary (the
    conversion to a numpy string array alone costs more than this whole function)."""
    first: dict[str, int] = {}
    raw = np.fromiter(
        (first.setdefault(v, len(first)) for v in map(str, values.tolist())),
        dtype=np.int64, count=len(values),
    )  # fmt: skip
    names = sorted(first)
    rank = np.empty(len(names), dtype=np.int64)
    rank[[first[name] for name in names]] = np.arange(len(names))
    return names, rank[raw] if len(raw) else raw


def score_table(
    items: Sequence[Item], records: dict[str, Record], scope: Collection[str] | None = None
) -> ScoreTable:
    """Join items with their records (items without a record are left out).

    The item kind becomes the ``kind`` axis (unless a native field already has that name).
    `scope`: the ids of a judged score source's scope (``analysis.score_source``).
    """
    rows = [(item, records[item.id]) for item in items if item.id in records]
    keys = sorted({k for item, _ in rows for k in item.meta})

    def number(value: Any) -> float:
        return float("nan") if value is None else float(value)

    meta = {k: np.array([item.meta.get(k, "") for item, _ in rows], dtype=object) for k in keys}
    meta.setdefault("kind", np.array([item.kind for item, _ in rows], dtype=object))
    names = sorted({name for _, r in rows for name in (r.get("scores") or {})})
    chances = [secondary_baselines(item) for item, _ in rows]
    return ScoreTable(
        ids=[item.id for item, _ in rows],
        score=np.array([number(r.get("score")) for _, r in rows], dtype=float),
        vlmeval=np.array(
            [number((r.get("vlmeval") or {}).get("score")) for _, r in rows], dtype=float
        ),
        random=np.array([number(random_baseline(item)) for item, _ in rows], dtype=float),
        status=np.array([_status(r) for _, r in rows], dtype=object),
        finish=np.array([str(r.get("finish_reason") or "") for _, r in rows], dtype=object),
        cluster=np.array([item.meta.get("image_id", item.id) for item, _ in rows], dtype=object),
        meta=meta,
        secondary={
            name: np.array([number((r.get("scores") or {}).get(name)) for _, r in rows], float)
            for name in names
        },
        secondary_random={
            name: np.array([number(c.get(name)) for c in chances], float) for name in names
        },
        scope=None if scope is None else np.array([i.id in scope for i, _ in rows], dtype=bool),
    )


def _status(record: Record) -> str:
    if record.get("error") is not None:
        return "error"
    return str((record.get("extraction") or {}).get("status", "empty"))


def cell(table: ScoreTable, mask: np.ndarray, spread: Spread | None = None) -> dict[str, Any]:
    """n, images, score, 95% CI, random baseline, rates and the VLMEvalKit-rules score of one
    slice, with the chance-corrected score, the one-sided p of "above chance" and, when the run
    has them, the secondary metrics of the slice with their own n and CI.

    `spread` may be given when it was computed for many slices at once (see :func:`by_axis`).
    """
    scored = mask & table.scored
    n = int(scored.sum())
    out: dict[str, Any] = {"n": n, "images": 0, "score": None, "ci": None, "random": None}
    out["vlmeval_score"] = None
    if n:
        values = table.score[scored]
        spread = spread or group_spread(values, np.zeros(n, np.intp), table.cluster_codes[scored])
        out.update(_summary(spread, values, table.random[scored]))
        out["vlmeval_score"] = _nanmean(table.vlmeval[scored])
        if out["vlmeval_score"] is not None:  # extraction sensitivity, over items read both ways
            both = scored & ~np.isnan(table.vlmeval)
            out["sensitivity"] = float(table.score[both].mean()) - out["vlmeval_score"]
    status_is = table.status_is
    errored = mask & status_is["error"]
    n_errored, total = int(errored.sum()), int(mask.sum())
    n_answered = total - n_errored
    for status in ("unparsed", "refused", "empty"):
        count = int((mask & status_is[status]).sum())  # an errored row has status "error"
        out[status] = count / n_answered if n_answered else 0.0
    out["error"] = n_errored / total if total else 0.0
    out["truncated"] = truncated_rate(table, mask & ~errored)
    if table.secondary:
        out["secondary"] = secondary_cells(table, mask)
    if table.scope is not None:
        in_scope = mask & table.scope
        out["coverage"] = {"verdicts": int((in_scope & table.scored).sum()),
                           "scope": int(in_scope.sum())}  # fmt: skip
    return out


def truncated_rate(table: ScoreTable, answered: np.ndarray) -> float | None:
    """Share of the answered items cut at the token cap (finish reason ``length``), over the
    items whose backend said why it stopped; None when none did (baselines, replays)."""
    if table.finish is None:
        return None
    known = answered & (table.finish != "")
    n_known = int(known.sum())
    return int((known & (table.finish == "length")).sum()) / n_known if n_known else None


def vocabulary_decided(records: Iterable[Record]) -> int:
    """Items whose verdict needed a vocabulary entry (``extraction.method`` names it:
    ``…:vocab:AXIS:TERM``, ``extract.vocabulary``)."""
    return sum(
        1
        for record in records
        if ":vocab:" in f":{(record.get('extraction') or {}).get('method') or ''}"
    )


def _summary(spread: Spread, values: np.ndarray, chances: np.ndarray) -> dict[str, Any]:
    """The interval, images, chance and tests of one slice's scored values (one-group spread)."""
    lo, hi = spread.bounds()
    images = int(spread.images[0])
    effective = float(spread.effective_images[0])
    random = baseline_mean(chances)
    score = float(values.mean())
    p_above = None if random is None else float(chance_p(spread, np.array([random]))[0])
    return {
        "images": images,
        "effective_images": round(effective, 2),
        "score": score,
        "ci": [float(lo[0]), float(hi[0])],
        "random": random,
        "chance_corrected": chance_corrected(score, random),
        "p_above_chance": p_above,
        "small": is_small(values.size, effective),
        **({"note": note} if (note := one_image_note(images)) else {}),
    }


def secondary_cells(table: ScoreTable, mask: np.ndarray) -> dict[str, dict[str, Any]]:
    """Each secondary metric over the slice's items that have it: n, images, mean, CI, chance."""
    out = {}
    for name, column in table.secondary.items():
        has = mask & ~np.isnan(column)
        if not has.any():
            continue
        values, clusters = column[has], table.cluster_codes[has]
        continuous = name not in ZERO_ONE_SECONDARY  # no Wilson on a BLEU that is all 0/1
        spread = group_spread(
            values, np.zeros(values.size, np.intp), clusters, continuous=continuous
        )
        summary = _summary(spread, values, table.secondary_random[name][has])
        out[name] = {"n": int(has.sum()), **summary}
    return out


def baseline_mean(values: np.ndarray) -> float | None:
    """Mean chance score; items without a chance level (open answers) count as 0 in a mix."""
    return None if np.isnan(values).all() else float(np.nan_to_num(values, nan=0.0).mean())


def _nanmean(values: np.ndarray) -> float | None:
    return None if np.isnan(values).all() else float(np.nanmean(values))
