"""A judge's verdicts, read through the judge store (``runs/<run>/judges/<name>/``).

:func:`read_verdicts` is the one reading of a judge stage: every command that shows a judged
number (the judge stage's own tables, ``--score judge:/combined:``, boards, layouts,
``agreement``, calibration, study boards, the viewer) gets its items' verdicts from it, so an
order flip of ``--swap``, a panel's even split and an even split of binary repeats are items
without a verdict everywhere (``combine.item_verdict``). Values per dimension and item serve
human agreement, rating sheets and inter-judge agreement."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.judges.combine import item_verdict, protocol_kind
from medlens.judges.fast_lines import fast_verdicts
from medlens.judges.panel import is_panel, member_folders
from medlens.runs.judgements import JudgeStore, judge_dir, read_judge
from medlens.runs.layout import is_judge_stage
from medlens.stats.agreement import rater_agreement, self_agreement

RUBRIC_DIMENSIONS = ("consistency", "coherence", "visual_accuracy", "ground_truth_correctness")
Values = dict[str, dict[str, float]]
"""dimension → item id → value (equivalent: 1.0/0.0; rubric: mean over repeats, 0–10)."""


def read_judgements(run_dir: Path | str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(judge.json, judgement lines)``: each (item, repeat)'s latest line, as the store keeps it."""
    meta = read_judge(run_dir, name)
    return meta, list(JudgeStore.open(judge_dir(run_dir, name)).lines().values())


@dataclass(frozen=True)
class StageVerdicts:
    """One judge stage's verdicts on its items."""

    meta: dict[str, Any]
    """The stage's judge.json."""
    scores: dict[str, float]
    """Item id → judged score in [0, 1], for the items with a usable verdict (rule-settled
    items: their rule score)."""
    missing: dict[str, str]
    """Item id → why the item has no verdict (``order_flip``, ``unresolved``, ``error``,
    ``unparseable``, …): items the stage was given that no table may score by the judge."""


def read_verdicts(run_dir: Path | str, name: str) -> StageVerdicts:
    """The verdicts of judge `name` on the run: the one function every judged table reads.

    A finished one-repeat stage is read by ``fast_lines`` (pyarrow, the needed fields only);
    any other through the store, each item's lines combined by ``combine.item_verdict``.
    """
    meta = read_judge(run_dir, name)
    fast = fast_verdicts(judge_dir(run_dir, name), meta)
    if fast is not None:
        return StageVerdicts(meta, fast.scores, fast.missing)
    lines = list(JudgeStore.open(judge_dir(run_dir, name)).lines().values())
    kind = protocol_kind(meta)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in sorted(lines, key=lambda line: int(line.get("repeat") or 0)):
        grouped[str(line["id"])].append(line)
    scores: dict[str, float] = {}
    missing: dict[str, str] = {}
    for item in sorted(grouped):
        verdict = item_verdict(kind, grouped[item])
        if math.isnan(verdict.score):
            missing[item] = verdict.outcome
        else:
            scores[item] = verdict.score
    return StageVerdicts(meta, scores, missing)


def judge_dimensions(meta: dict[str, Any]) -> list[str]:
    protocol = meta["protocol"]
    if protocol.get("name") in ("equivalence", "mmbu"):
        return ["equivalent"]
    return [str(d) for d in protocol.get("dimensions") or RUBRIC_DIMENSIONS]


def judged_values(run_dir: Path | str, name: str) -> tuple[Values, list[str], dict[str, Any]]:
    """Per dimension, each item's judged value over its ok repeats (latest line per repeat).

    Only items with a usable verdict (``read_verdicts``) have values: equivalence is that
    verdict (an even split of repeats, an order flip: no value), settled by the rules
    (``by: "rule"``) counts as equivalent; rubric: mean of the ok repeats. Unparseable and
    errored verdicts are left out, never scored 0.
    """
    meta, lines = read_judgements(run_dir, name)
    usable = read_verdicts(run_dir, name).scores
    dimensions = judge_dimensions(meta)
    latest: dict[tuple[str, int], dict[str, Any]] = {}
    for line in lines:
        latest[(str(line["id"]), int(line.get("repeat") or 0))] = line
    repeats: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (item, _), line in sorted(latest.items()):
        if line.get("status") != "ok":
            continue  # repeats of unresolved items stay: self-agreement must see them
        for dimension, value in _verdict_values(line, dimensions).items():
            repeats[dimension][item].append(value)
    values: Values = {d: {} for d in dimensions}
    for dimension, by_item in repeats.items():
        for item, seen in by_item.items():
            if item not in usable:
                continue
            values[dimension][item] = (
                usable[item] if dimension == "equivalent" else sum(seen) / len(seen)
            )
    return values, dimensions, {"meta": meta, "repeats": repeats}


def judged_points(run_dir: Path | str, name: str) -> tuple[Values, list[str], dict[str, Any]]:
    """``judged_values`` without the repeats (values, dimensions, judge.json); a finished
    one-repeat stage is read by the fast path (its one line per item is the item's verdict)."""
    meta = read_judge(run_dir, name)
    fast = fast_verdicts(judge_dir(run_dir, name), meta)
    if fast is not None and protocol_kind(meta) == "rubric":
        return fast.points, judge_dimensions(meta), meta
    values, dimensions, extra = judged_values(run_dir, name)
    return values, dimensions, extra["meta"]


def _verdict_values(line: dict[str, Any], dimensions: Sequence[str]) -> dict[str, float]:
    verdict = line.get("verdict")
    if "equivalent" in dimensions:
        if line.get("by") == "rule":
            return {"equivalent": 1.0}
        if isinstance(verdict, dict) and isinstance(verdict.get("equivalent"), bool):
            return {"equivalent": 1.0 if verdict["equivalent"] else 0.0}
        return {}
    scores = verdict.get("scores") if isinstance(verdict, dict) else None
    if not isinstance(scores, dict):
        return {}
    return {
        d: float(scores[d])
        for d in dimensions
        if isinstance(scores.get(d), (int, float)) and not isinstance(scores.get(d), bool)
    }


def judged_item_scores(run_dir: Path | str, name: str) -> dict[str, float]:
    """Each judged item's score in [0, 1], exactly as the reports' judged tables count it
    (``combine.item_verdict``: repeats, both orders of ``--swap``; a panel's combined verdicts):
    equivalence and mmbu 1/0, rubric Σ wᵢ(sᵢ − low) / ((high − low)·Σ wᵢ), rule-settled items
    their rule score. Items without a verdict (failed, unresolved, order flips) are absent."""
    return read_verdicts(run_dir, name).scores


def weighted_scores(values: Values, weights: dict[str, float], top: float) -> dict[str, float]:
    """Σ wᵢsᵢ / (top·Σ wᵢ) for each item rated on every weighted dimension."""
    dims = [d for d, w in weights.items() if w > 0]
    items = set.intersection(*(set(values.get(d, {})) for d in dims)) if dims else set()
    total = sum(weights[d] for d in dims)
    return {
        item: sum(weights[d] * values[d][item] for d in dims) / (top * total)
        for item in sorted(items)
    }


def judged_values_of_judges(
    run_dir: Path | str, names: Sequence[str]
) -> tuple[dict[str, Values], list[str]]:
    """Judged values of several judges of one run, which must share their protocol's dimensions."""
    if len(names) < 2:
        raise MedlensError("inter-judge agreement needs two or more judges (--judge A --judge B)")
    out: dict[str, Values] = {}
    dimensions: list[str] | None = None
    for name in names:
        values, dims, _ = judged_values(run_dir, name)
        if dimensions is not None and dims != dimensions:
            raise MedlensError(
                f"{judge_dir(run_dir, name)}: judge {name!r} rates {', '.join(dims)}, "
                f"judge {names[0]!r} rates {', '.join(dimensions)}; they cannot be compared"
            )
        dimensions = dims
        out[name] = values
    return out, dimensions or []


def judge_self_agreement(run_dir: Any, name: str) -> dict[str, Any]:
    """Per dimension, how well one judge's ``--repeats`` agree with each other (see self_agreement)."""
    _, dimensions, extra = judged_values(run_dir, name)
    return {
        dimension: self_agreement(
            extra["repeats"].get(dimension, {}),
            "nominal" if dimension == "equivalent" else "interval",
        )
        for dimension in dimensions
    }


def shared_replies(run_dir: Path | str, first: str, second: str) -> tuple[int, int, int]:
    """(items whose two verdicts are one response-cache entry, items both judges asked, how
    many more of the shared ones `second` read from the cache than `first`): the same request to
    the same judge endpoint or weights, so one judge repeats the other (the one that read the
    cache is the copy)."""
    keys: list[dict[str, set[str]]] = []
    cached: list[set[str]] = []
    for name in (first, second):
        found: dict[str, set[str]] = defaultdict(set)
        hits: set[str] = set()
        for line in _call_lines(run_dir, name):
            if line.get("by") == "judge" and line.get("cache_key"):
                found[str(line["id"])].add(str(line["cache_key"]))
                if line.get("cached"):
                    hits.add(str(line["id"]))
        keys.append(found)
        cached.append(hits)
    both = set(keys[0]) & set(keys[1])
    shared = {item for item in both if keys[0][item] & keys[1][item]}
    return len(shared), len(both), len(shared & cached[1]) - len(shared & cached[0])


def _call_lines(run_dir: Path | str, name: str) -> list[dict[str, Any]]:
    """The lines of the calls behind a judge's verdicts: its own, or a panel's members'."""
    meta, lines = read_judgements(run_dir, name)
    if not is_panel(meta):
        return lines
    folder = judge_dir(run_dir, name)
    return [
        line
        for member in member_folders(folder, meta).values()
        if is_judge_stage(member)
        for line in JudgeStore.open(member).lines().values()
    ]


def independent_judges(run_dir: Path | str, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """The judges that are no cached copy of another, and a line for each that is (of two that
    share cache entries, the one that read more of them from the cache is the copy)."""
    kept: list[str] = []
    notes: list[str] = []
    for name in names:
        for index, earlier in enumerate(kept):
            shared, asked, later_cached = shared_replies(run_dir, earlier, name)
            if not shared:
                continue
            copy, original = (name, earlier) if later_cached >= 0 else (earlier, name)
            notes.append(
                f"agreement of {copy} with {original} is not computed: on {shared} of the "
                f"{asked} items both asked, their verdicts are one response-cache entry (the "
                "same judge, server and prompt), so it would measure the cache, not two judges"
            )
            if copy == earlier:
                kept[index] = name
            break
        else:
            kept.append(name)
    return kept, notes


def inter_judge_agreement(run_dir: Any, names: Sequence[str]) -> dict[str, Any]:
    """Agreement of two or more judges of one run, per dimension (see ``medlens.judges.verdicts``).

    Equivalence judges: Cohen's κ (unweighted) on the verdicts; rubric judges: Spearman ρ and
    quadratic-weighted κ per dimension; Krippendorff's α for every dimension (the headline figure
    when there are three or more judges). A judge whose verdicts are another's cached replies
    is left out, and ``not_computed`` says so (agreement with a copy is 1 by construction).
    """
    values, dimensions = judged_values_of_judges(run_dir, names)
    kept, notes = independent_judges(run_dir, names)
    out: dict[str, Any] = {"judges": kept, "dimensions": {}}
    if notes:
        out["not_computed"] = notes
    if len(kept) < 2:
        return out
    for dimension in dimensions:
        nominal = dimension == "equivalent"
        per_judge = {name: values[name].get(dimension, {}) for name in kept}
        out["dimensions"][dimension] = rater_agreement(
            per_judge,
            level="nominal" if nominal else "interval",
            weights=None if nominal else "quadratic",
            labels=[0.0, 1.0] if nominal else [float(v) for v in range(11)],
        )
    return out
