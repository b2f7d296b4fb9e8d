"""results.json: every aggregate of a run, derived from its directory alone."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.analysis.closed_open import closed_items, closed_open, task_items
from medlens.analysis.medcmr_split import medcmr_split
from medlens.analysis.score_source import RULES, ScoreSource, SourcedRun, sourced_run
from medlens.analysis.score_table import (
    ScoreTable,
    cell,
    score_table,
    secondary_cells,
    vocabulary_decided,
)
from medlens.analysis.sensitivity import extraction_sensitivity, other_reading
from medlens.analysis.task_mean import TaskItems
from medlens.core.items import CANONICAL_AXES, READING_FIELDS, Item
from medlens.core.records import Record
from medlens.runs.health import run_health
from medlens.runs.store import RunStore
from medlens.runs.view import RunView
from medlens.scoring.protocol_sections import attach_protocol_sections
from medlens.stats.bootstrap import group_spread
from medlens.stats.intervals import Spread

MAX_AXIS_VALUES = 60


def breakdown_axes(table: ScoreTable) -> list[str]:
    """Axes worth a per-value table: canonical ones, and native fields with 2–60 values.

    A native field that only renames a canonical axis (GMAI's "perceptual granularity" with
    "Box Level" for `granularity` = "box"), or a native field kept before it, is left out: it
    would repeat the same table.
    """
    axes: list[str] = []
    codes = _Codes(table)
    for key, values in table.meta.items():
        distinct = len(set(values.tolist()) - {""})
        if key == "image_id" or key in READING_FIELDS or not 0 < distinct <= MAX_AXIS_VALUES:
            continue
        if key not in CANONICAL_AXES and per_item_values(key, values):
            continue  # JSON, ids and paths are kept for other uses, never tabulated
        if key in CANONICAL_AXES or (
            distinct >= 2 and not _renames(codes, key, [*CANONICAL_AXES, *axes])
        ):
            axes.append(key)
    return sorted(
        axes,
        key=lambda a: (
            a not in CANONICAL_AXES,
            CANONICAL_AXES.index(a) if a in CANONICAL_AXES else 0,
            a,
        ),
    )


_PATH_LIKE = re.compile(
    r"(^|[/\\])[^/\\\s]+\.(png|jpe?g|dcm|dicom|nii|gz|tiff?|bmp|gif|npy|json)$", re.IGNORECASE
)


ID_SUFFIXES = ("id", "_path", "_file", "_row", "_index")
"""Field names that say id or path (``qid``, ``img_id``, ``source_row``): per-item values even
when a small selection repeats them."""


def per_item_values(key: str, values: np.ndarray) -> bool:
    """A native field holding an id, a path or JSON per item: never a table, never a `--by`."""
    return key.endswith(ID_SUFFIXES) or _structured(values) or not_a_category(values)


def not_a_category(values: np.ndarray) -> bool:
    """Ids and paths: file-like values, or a value per item (more than 10 items, ≥ 90% unique)."""
    present = [str(v) for v in values.tolist() if v != ""]
    distinct = set(present)
    if any(_PATH_LIKE.search(value) for value in distinct):
        return True
    return len(present) > 10 and len(distinct) >= 0.9 * len(present)


def _structured(values: np.ndarray) -> bool:
    return any(str(v).startswith(("[", "{")) for v in set(values.tolist()))


class _Codes:
    """Each meta field's values as integer codes, computed once per field."""

    def __init__(self, table: ScoreTable) -> None:
        self.table = table
        self._known: dict[str, tuple[np.ndarray, int]] = {}

    def of(self, key: str) -> tuple[np.ndarray, int]:
        """(code per item, number of distinct values)."""
        if key not in self._known:
            names, codes = self.table.meta_codes(key)
            self._known[key] = (codes, len(names))
        return self._known[key]


def _renames(codes: _Codes, key: str, others: Sequence[str]) -> bool:
    """True when `key` pairs one to one with one of `others` (the same partition of items)."""
    mine, distinct = codes.of(key)
    for axis in others:
        if axis not in codes.table.meta or axis == key:
            continue
        theirs, their_distinct = codes.of(axis)
        pairs = np.unique(mine * their_distinct + theirs).size
        if pairs == distinct == their_distinct:
            return True
    return False


def by_axis(table: ScoreTable, axes: Sequence[str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per-value cells of each axis; the CIs of one axis come from one `group_spread` call."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    scored = table.scored
    clusters = table.cluster_codes[scored]
    for axis in axes:
        names, codes = table.meta_codes(axis)  # integer compares, not string compares
        spreads: dict[str, Spread] = {}
        if scored.any():
            present = np.unique(codes[scored])
            spread = group_spread(table.score[scored], codes[scored], clusters)
            spreads = {names[code]: spread.row(i) for i, code in enumerate(present.tolist())}
        out[axis] = {
            value: cell(table, codes == code, spreads.get(value))
            for code, value in enumerate(names)
            if value != ""
        }
    return out


def gap_ci(table: ScoreTable, first: np.ndarray, second: np.ndarray) -> list[float] | None:
    """95% CI of mean(first) − mean(second) over scored items (``paired.difference_ci``)."""
    from medlens.stats.paired import difference_ci

    scored = table.scored
    ci = difference_ci(table.score[scored], first[scored], second[scored], table.cluster[scored])
    return None if ci is None else [ci[0], ci[1]]


def box_image_gap(table: ScoreTable) -> dict[str, Any] | None:
    """Box-level − image-level score with its CI (None without both granularities)."""
    levels = table.meta.get("granularity")
    if levels is None:
        return None
    box, image = levels == "box", levels == "image"
    ci = gap_ci(table, box, image)
    if ci is None:
        return None
    scored = table.scored
    difference = float(table.score[box & scored].mean() - table.score[image & scored].mean())
    return {
        "difference": difference,
        "ci": ci,
        "n_box": int((box & scored).sum()),
        "n_image": int((image & scored).sum()),
    }


def secondary_means(records: dict[str, Record]) -> dict[str, float]:
    """Mean of each secondary per-item metric (jaccard, token_f1, …) over the records that have it."""
    sums: dict[str, list[float]] = {}
    for record in records.values():
        for name, value in (record.get("scores") or {}).items():
            sums.setdefault(name, []).append(float(value))
    return {name: float(np.mean(values)) for name, values in sorted(sums.items())}


def usage_totals(records: dict[str, Record]) -> dict[str, Any]:
    """Token counts of fresh answers (`tokens`) and, apart, of cache answers (`cached_tokens`)."""
    tokens: dict[str, int] = {}
    cached_tokens: dict[str, int] = {}
    for record in records.values():
        into = cached_tokens if record.get("cached") else tokens
        for name, value in (record.get("usage") or {}).items():
            into[name] = into.get(name, 0) + int(value)
    latencies = [r["latency"] for r in records.values() if r.get("latency") and not r.get("cached")]
    return {
        "tokens": tokens,
        "cached_tokens": cached_tokens,
        "cached": sum(1 for r in records.values() if r.get("cached")),
        "latency_mean": float(np.mean(latencies)) if latencies else None,
        "latency_p95": float(np.percentile(latencies, 95)) if latencies else None,
    }


def build_results(store: RunView | RunStore, source: ScoreSource | None = None) -> dict[str, Any]:
    """Every aggregate of the run; written to results.json and read by every report.

    `source` (``--score``) chooses the per-item scores every aggregate reads (rules by
    default, the only source results.json is written with); the judge sections and the usage
    and health figures always read the run's own records.
    """
    return build_results_and_table(store, source)[0]


def build_results_and_table(
    run: RunView | RunStore, source: ScoreSource | None = None
) -> tuple[dict[str, Any], ScoreTable]:
    """Every aggregate of the run, and the score table they were computed from (saved beside
    results.json as the run's ``scores`` artifact for the commands that slice it again)."""
    store = run if isinstance(run, RunView) else run.view()
    items = store.items()
    records = store.records()
    sourced = sourced_run(store.path, items, records, source or RULES)
    items, records, run_items, run_records = sourced.items, sourced.records, items, records
    table = score_table(items, records, sourced.scope)
    overall = cell(table, np.ones(len(table.ids), dtype=bool))
    results = _results(store, sourced, (run_items, run_records), table, overall)
    wanted = overall["vlmeval_score"] is not None
    reading = other_reading(store, items, records) if wanted else None
    results["extraction_sensitivity"] = extraction_sensitivity(items, records, table, reading)
    return results, table


def _results(
    store: RunView, sourced: SourcedRun, run: tuple[list[Item], dict[str, Record]],
    table: ScoreTable, overall: dict[str, Any],
) -> dict[str, Any]:  # fmt: skip
    """Every section but the extraction sensitivity (computed meanwhile, maybe aside)."""
    items, records, (run_items, run_records) = sourced.items, sourced.records, run
    everything = np.ones(len(table.ids), dtype=bool)
    axes = breakdown_axes(table)
    spec = store.run["spec"]
    has_answers = bool(spec["benchmark"].get("has_answers", True))
    results = {
        "run": store.path.name,
        "score_source": sourced.source.label,
        **({"score_coverage": sourced.coverage} if sourced.coverage else {}),
        "spec": spec,
        "has_answers": has_answers,
        "counts": {
            "items": len(items),
            "records": len(table.ids),
            "pending": len(items) - len(table.ids),
            "errors": int((table.status == "error").sum()),
            "vocabulary": vocabulary_decided(records.values()),
            "items_with_images": sum(1 for item in run_items if item.images),
        },
        "overall": overall,
        "rates": {k: overall[k] for k in ("unparsed", "refused", "empty", "error", "truncated")},
        "extraction_sensitivity": None,  # filled in by the caller
        "secondary": secondary_cells(table, everything),
        "closed_open": closed_open(table, axes, items),
        "box_image_gap": box_image_gap(table),
        "by": by_axis(table, axes),
        "usage": usage_totals(run_records),
        "health": run_health(run_records, store.damaged, store.run.get("cache_checks") or ()),
    }
    from medlens.judges.results import judges_results

    results["judges"] = judges_results(
        store.path, run_items, run_records, axes, str(spec["model"]), results["closed_open"],
        closed_items(
            table if sourced.scope is None else score_table(run_items, run_records), run_items
        ),
    )  # fmt: skip
    split = medcmr_split(spec, items, table, results["judges"], sourced.source.label)
    if split is not None:  # Med-CMR's MCQ and judged open scores, apart
        results["medcmr"] = split
    add_run_sections(results, store, items, records, task_items(table, items))
    return results


def add_run_sections(
    results: dict[str, Any], store: RunView, items: list[Item], records: dict[str, Record],
    shared: TaskItems | None = None,
) -> None:  # fmt: skip
    """The sections beside the scores: protocol figures, the peer's own, leakage suspects,
    strategy figures and what ran."""
    spec = store.run["spec"]
    attach_protocol_sections(results, items, records)  # issue 15: corpus metrics, single/multi
    from medlens.scoring.peer_figures import peer_figures  # issue 23: the peer's own figures

    peer = peer_figures(str(spec.get("extract", "medlens")), items, records)
    if peer is not None:
        results["peer"] = peer
    if spec.get("probe"):
        results["leakage_suspects"] = probe_suspects(spec["probe"], results)
    add_strategy_results(results, spec, records)
    from medlens.analysis.task_mean import mmbu_gap, task_mean_delta  # across-task mean Δ

    across = task_mean_delta(results.get("closed_open"), shared=shared)
    if across is not None:
        results["closed_open_task_mean"] = across
    gap = mmbu_gap(results.get("closed_open"), shared)
    if gap is not None and gap["headline"] is not None:
        results["mmbu_gap"] = gap
    from medlens.execution.manual import manual_summary  # answers a person entered
    from medlens.runs.provenance import served_summary  # issue 16: what ran, beside what it scored

    manual = manual_summary(records.values())
    if manual is not None:
        results["manual"] = manual
    results["environment"] = store.run.get("environment")
    results["served"] = served_summary(records.values())


def add_strategy_results(
    results: dict[str, Any], spec: dict[str, Any], records: dict[str, Record]
) -> None:
    """The prompting strategy, self-consistency agreement, and why a split has no scores."""
    from medlens.execution.strategies import consistency_summary, refinement_summary

    results["strategy"] = (spec.get("strategy") or {}).get("name", "zero-shot")
    votes = consistency_summary(list(records.values()))
    if votes is not None:
        results["self_consistency"] = votes
    refined = refinement_summary(list(records.values()))
    if refined is not None:
        results["ensemble_refinement"] = refined
    if not results["has_answers"]:
        results["no_answers_reason"] = no_answers_reason(spec["benchmark"]["name"])


NO_ANSWERS_DEFAULT = "This split has no answers: scores need the official answer key."


def no_answers_reason(benchmark: str) -> str:
    """A loader's own ``NO_ANSWERS_REASON`` (HealthSearchQA has no references at all)."""
    from medlens.sources import SOURCES

    if benchmark not in SOURCES:
        return NO_ANSWERS_DEFAULT
    return str(getattr(SOURCES.module_of(benchmark), "NO_ANSWERS_REASON", NO_ANSWERS_DEFAULT))


def probe_suspects(probe: str, results: dict[str, Any]) -> list[dict[str, Any]] | None:
    """Slices scoring significantly above chance although the probe removed their evidence.

    None for probes that remove no evidence (shuffle-options), where above-chance is expected.
    """
    from medlens.execution.probes import EVIDENCE_PROBES, leakage_suspects

    if probe not in EVIDENCE_PROBES:
        return None
    return [suspect.to_json() for suspect in leakage_suspects(results)]
