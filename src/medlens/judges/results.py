"""The ``judges`` key of results.json: judged scores beside rule scores, per slice, with CIs.

Per item, repeats (and ``--swap`` orders) combine as ``combine.item_verdict`` says; an item
without a verdict is a judge error, left out of the judged score (never scored 0) and counted
per slice by its failure. Rule-settled items (no call) count with their rule score. Calls are
the requests the judge really got: verdicts read from the response cache are counted apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.judges.calibration import calibration_entry, scores_digest
from medlens.judges.combine import BINARY, combine, item_verdict, protocol_kind
from medlens.judges.inter_judge import add_inter_judge
from medlens.judges.members import member_lines, panel_members
from medlens.judges.panel import is_panel
from medlens.runs.judgements import JudgeStore, judge_names, judges_dir
from medlens.scoring.closed_open import PairKey, closed_open_delta, pair_key
from medlens.stats.bootstrap import group_cis

__all__ = ["BINARY", "combine", "judge_result", "judged_table", "judges_results"]


@dataclass(frozen=True)
class JudgedTable:
    """One row per judged (or rule-settled) item of one judge stage."""

    ids: list[str]
    score: np.ndarray
    """Judged item score; NaN for judge errors."""
    rule: np.ndarray
    cluster: np.ndarray
    meta: dict[str, np.ndarray]
    dimensions: dict[str, np.ndarray]
    """Mean points per rubric dimension (NaN: rule-settled or judge error)."""
    lines: list[list[dict[str, Any]]]
    outcomes: np.ndarray
    """Per item: ``ok``, or why it has no score (``combine.ItemVerdict.outcome``)."""
    flips: np.ndarray
    """Per item with both ``--swap`` orders read: 1.0 when the order changed the reading, 0.0
    when not; NaN otherwise."""


def judged_table(
    store: JudgeStore, items: Sequence[Item], records: dict[str, Record]
) -> JudgedTable:
    kind = protocol_kind(store.spec)
    dims = [str(d) for d in store.spec["protocol"].get("dimensions", [])]
    grouped = dict(store.by_item())
    rows = [(item, grouped[item.id]) for item in items if item.id in grouped]
    keys = sorted({k for item, _ in rows for k in item.meta})
    scores, outcomes, flips = [], [], []
    dimension_values: dict[str, list[float]] = {d: [] for d in dims}
    for _, lines in rows:
        verdict = item_verdict(kind, lines)
        scores.append(verdict.score)
        outcomes.append(verdict.outcome)
        flips.append(float("nan") if verdict.flip is None else float(verdict.flip))
        ok = [line for line in lines if line.get("status") == "ok" and line.get("verdict")]
        for dim in dims:
            points = [line["verdict"]["scores"][dim] for line in ok if verdict.outcome == "ok"
                      and dim in (line["verdict"].get("scores") or {})]  # fmt: skip
            dimension_values[dim].append(float(np.mean(points)) if points else float("nan"))
    return JudgedTable(
        ids=[item.id for item, _ in rows],
        score=np.array(scores, dtype=float),
        rule=np.array([float((records.get(i.id) or {}).get("score") or 0.0) for i, _ in rows]),
        cluster=np.array([item.meta.get("image_id", item.id) for item, _ in rows], dtype=object),
        meta={k: np.array([item.meta.get(k, "") for item, _ in rows], dtype=object) for k in keys},
        dimensions={d: np.array(v, dtype=float) for d, v in dimension_values.items()},
        lines=[lines for _, lines in rows],
        outcomes=np.array(outcomes, dtype=object),
        flips=np.array(flips, dtype=float),
    )


def table_scores(table: JudgedTable) -> dict[str, float]:
    """Item id → judged score of the items with a verdict."""
    return {i: float(s) for i, s in zip(table.ids, table.score, strict=True) if not np.isnan(s)}


def mean_ci(values: np.ndarray, clusters: np.ndarray, top: float = 1.0) -> dict[str, Any]:
    """n, mean and CI (`bootstrap.group_cis`) of the non-NaN values on the scale 0–`top`.

    The interval is computed on values / top (its bounds are clipped to [0, 1]) and scaled
    back, so a rubric dimension's 0–10 mean gets a CI inside [0, 10].
    """
    kept = ~np.isnan(values)
    n = int(kept.sum())
    if not n:
        return {"n": 0, "score": None, "ci": None}
    lo, hi = group_cis(values[kept] / top, np.zeros(n, dtype=np.intp), clusters[kept])
    return {"n": n, "score": float(values[kept].mean()),
            "ci": [float(top * lo[0]), float(top * hi[0])]}  # fmt: skip


RUBRIC_TOP = 10.0
"""Rubric dimensions are rated 0–10 (the protocols' default scale)."""


def slice_cell(table: JudgedTable, mask: np.ndarray) -> dict[str, Any]:
    """Judged score with CI, the rule score of the same items, their difference, judge errors."""
    cell = mean_ci(table.score[mask], table.cluster[mask])
    kept = mask & ~np.isnan(table.score)
    cell["rule_score"] = float(table.rule[kept].mean()) if kept.any() else None
    cell["sensitivity"] = (
        cell["score"] - cell["rule_score"] if cell["score"] is not None else None
    )  # judge sensitivity: judged − rule on the same items
    missing = mask & np.isnan(table.score)
    cell["judge_errors"] = int(missing.sum())
    kinds, counts = np.unique(table.outcomes[missing].astype(str), return_counts=True)
    cell["judge_failures"] = {str(k): int(n) for k, n in zip(kinds, counts, strict=True)}
    return cell


def by_axis(table: JudgedTable, axes: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for axis in axes:
        values = table.meta.get(axis)
        if values is None:
            continue
        labels = sorted(set(values.tolist()) - {""})
        if len(labels) > 1:
            out[axis] = {str(v): slice_cell(table, values == v) for v in labels}
    return out


def live_calls(line: dict[str, Any]) -> int:
    """Requests a judgement line cost (lines written before ``calls`` existed: 1 unless cached)."""
    if "calls" in line:
        return int(line["calls"] or 0)
    return 0 if line.get("cached") else 1


def call_counts(all_lines: list[dict[str, Any]], repeats: int) -> dict[str, Any]:
    """Calls really sent, verdicts from the response cache, and replies without a verdict."""
    judged = [line for line in all_lines if line.get("by") == "judge"]
    failures: dict[str, int] = {}
    for line in judged:
        if line.get("status") != "ok":
            kind = str(
                line.get("failure") or ("error" if line.get("status") == "error" else "unparseable")
            )
            failures[kind] = failures.get(kind, 0) + 1
    return {
        "calls": sum(live_calls(line) for line in judged),
        "cached": sum(1 for line in judged if line.get("cached")),
        "calls_saved": repeats * sum(1 for line in all_lines if line.get("by") == "rule"),
        "unparseable": sum(1 for line in judged if line.get("status") == "unparseable"),
        "errors": sum(1 for line in judged if line.get("status") == "error"),
        "failures": failures,
        "format_warnings": sum(
            1 for line in judged if (line.get("verdict") or {}).get("format_warning")
        ),
    }


def usage(all_lines: list[dict[str, Any]]) -> dict[str, Any]:
    judged = [line for line in all_lines if line.get("by") == "judge"]
    tokens: dict[str, int] = {}
    for line in judged:
        if line.get("cached"):
            continue  # a cached verdict cost nothing now
        for key, value in (line.get("usage") or {}).items():
            tokens[key] = tokens.get(key, 0) + int(value)
    latencies = [
        line["latency"] for line in judged if line.get("latency") and not line.get("cached")
    ]
    return {
        "tokens": tokens,
        "cached": sum(1 for line in judged if line.get("cached")),
        "latency_mean": float(np.mean(latencies)) if latencies else None,
    }


def position_bias(table: JudgedTable) -> dict[str, Any] | None:
    """Share of items whose reading changed when their options were listed in the other order
    (``--swap``), with its CI; None when no item was read in both orders."""
    kept = ~np.isnan(table.flips)
    if not kept.any():
        return None
    cell = mean_ci(table.flips[kept], table.cluster[kept])
    return {"flips": int(table.flips[kept].sum()), "pairs": cell["n"], "rate": cell["score"],
            "ci": cell["ci"]}  # fmt: skip


def self_agreement(table: JudgedTable, kind: str, repeats: int) -> dict[str, Any] | None:
    """Agreement of a judge with itself over repeats: for verdicts, the share of agreeing
    repeat pairs; for rubrics, the mean absolute difference of repeat pairs per dimension."""
    if repeats < 2:
        return None
    per_item: list[float] = []
    per_dim: dict[str, list[float]] = {d: [] for d in table.dimensions}
    clusters: list[Any] = []
    for cluster, lines in zip(table.cluster, table.lines, strict=True):
        ok = [line for line in lines if line.get("by") == "judge" and line.get("status") == "ok"]
        if len(ok) < 2:
            continue
        clusters.append(cluster)
        pairs = list(combinations(ok, 2))
        per_item.append(float(np.mean([a["score"] == b["score"] for a, b in pairs])))
        for dim in per_dim:  # repeats that rated the dimension (a verdict protocol rates none)
            rated = [(_points(a, dim), _points(b, dim)) for a, b in pairs]
            diffs = [abs(x - y) for x, y in rated if x is not None and y is not None]
            per_dim[dim].append(float(np.mean(diffs)) if diffs else float("nan"))
    groups = np.array(clusters, dtype=object)
    out: dict[str, Any] = {"repeats": repeats, "agreement": mean_ci(np.array(per_item), groups)}
    if kind == "rubric":
        out["mad"] = {d: mean_ci(np.array(v), groups, RUBRIC_TOP) for d, v in per_dim.items()}
    return out


def _points(line: dict[str, Any], dim: str) -> float | None:
    value = (line.get("verdict", {}).get("scores") or {}).get(dim)
    return None if value is None else float(value)


def model_family(spec_text: str) -> str:
    """The family of a model named by a spec: the leading letters of its model name."""
    head = spec_text.split("?", 1)[0]
    name = head.split(":", 1)[1] if ":" in head else head
    name = Path(name.rstrip("/")).name.lower()
    found = re.match(r"[a-z]+", name.split("/")[-1])
    return found.group(0) if found else ""


def self_preference(judge_spec: str, model_spec: str) -> str | None:
    judge, model = model_family(judge_spec), model_family(model_spec)
    if judge and judge == model and judge not in ("replay", "random", "oracle", "first", "prior"):
        return (
            f"judge {judge_spec.split('?')[0]} and evaluated model {model_spec.split('?')[0]} "
            f"share the family {judge!r}: judges tend to prefer their own family's answers"
        )
    return None


def judge_result(
    store: JudgeStore,
    items: Sequence[Item],
    records: dict[str, Record],
    axes: Sequence[str],
    model_spec: str,
) -> dict[str, Any]:
    """One judge's entry of results.json ``judges`` (a panel's: with its members' entries)."""
    spec = store.spec
    kind = protocol_kind(spec)
    table = judged_table(store, items, records)
    everything = np.ones(len(table.ids), dtype=bool)
    overall = slice_cell(table, everything)
    all_lines = [line for group in table.lines for line in group]
    members = None
    if is_panel(spec):
        members = panel_members(
            store.folder,
            spec,
            lambda member: judge_result(member, items, records, axes, model_spec),
        )
        all_lines = member_lines(store.folder, spec)
    counts = call_counts(all_lines, int(spec.get("repeats", 1)))
    overall.update(
        calls=counts["calls"], cached_verdicts=counts["cached"], calls_saved=counts["calls_saved"]
    )
    warning = self_preference(str(spec["judge"]), model_spec)
    entry = {
        "protocol": spec["protocol"],
        "judge": spec["judge"],
        "scope": spec.get("scope"),
        "repeats": spec.get("repeats", 1),
        "overall": overall,
        "dimensions": {
            d: mean_ci(v, table.cluster, RUBRIC_TOP) for d, v in table.dimensions.items()
        },
        "by": by_axis(table, axes),
        "self_agreement": self_agreement(table, kind, int(spec.get("repeats", 1))),
        "replies": counts,
        "usage": usage(all_lines),
        "warnings": [warning] if warning else [],
        "judge_fingerprint": spec.get("judge_fingerprint"),
        "self_judged": bool(spec.get("self_judged")),
        "calibration": calibration_entry(store.folder, scores_digest(table_scores(table))),
        "_table": table,
    }
    if spec.get("swap"):
        entry["position_bias"] = position_bias(table)
    if members is not None:
        entry["panel"] = members
    return entry


def judges_results(
    run_dir: Path,
    items: Sequence[Item],
    records: dict[str, Record],
    axes: Sequence[str],
    model_spec: str,
    closed_open: dict[str, Any] | None,
    closed: tuple[np.ndarray, np.ndarray, Sequence[PairKey | None]] | None = None,
) -> dict[str, Any]:
    """Every judge stage of the run (``{}`` when there is none); `closed`: the rule scores,
    images and pair keys of the closed items, for the judged closed − open Δ."""
    out: dict[str, Any] = {}
    for name in judge_names(run_dir):
        store = JudgeStore.open(judges_dir(run_dir) / name)
        entry = judge_result(store, items, records, axes, model_spec)
        table = entry.pop("_table")
        if closed_open is not None and protocol_kind(store.spec) != "choice":
            gap = judged_closed_open(table, items, closed)
            if gap is not None:
                entry["closed_open"] = gap
        out[name] = entry
    add_inter_judge(run_dir, out)
    return out


def judged_closed_open(
    table: JudgedTable,
    items: Sequence[Item],
    closed_items: tuple[np.ndarray, np.ndarray, Sequence[PairKey | None]] | None = None,
) -> dict[str, Any] | None:
    """closed (rules) − open (judged): the closed−open Δ with judged open scores, paired by
    sample where the benchmark pairs its forms (``scoring.closed_open.closed_open_delta``, the
    one Δ every display prints); None without the closed items' rule scores."""
    kind = table.meta.get("answer_type")
    if closed_items is None or kind is None or not closed_items[0].size:
        return None
    opened = np.flatnonzero(kind == "open")
    keys = {item.id: pair_key(item) for item in items}
    closed_scores, closed_images, closed_keys = closed_items
    return closed_open_delta(
        np.array(["closed"] * closed_scores.size + ["open"] * opened.size, dtype=object),
        [*closed_keys, *(keys.get(table.ids[i]) for i in opened)],
        np.concatenate([closed_scores, table.score[opened]]),
        np.concatenate([np.asarray(closed_images).astype(str), table.cluster[opened].astype(str)]),
    )
