"""What stored ratings say: per-axis distributions with CIs, per slice, per rater, agreement.

Shares of a category are reported with a Wilson score interval per category (scipy's
``binomtest(...).proportion_ci(method="wilson")``), i.e. marginal 95% intervals, not a
simultaneous multinomial region.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from medlens.core.items import Item
from medlens.ratings.importing import latest_ratings, read_ratings, studies_of
from medlens.ratings.protocols import Axis
from medlens.ratings.study import Study
from medlens.runs.view import RunView
from medlens.stats.agreement import rater_agreement

MAX_SLICE_VALUES = 30
PREFERENCE_LABELS = ("A better", "equal", "B better")


def wilson(k: int, n: int) -> list[float] | None:
    from scipy.stats import binomtest

    if n == 0:
        return None
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return [float(ci.low), float(ci.high)]


def share(k: int, n: int) -> dict[str, Any]:
    return {"k": k, "n": n, "share": k / n if n else None, "ci": wilson(k, n)}


def distribution(labels: Iterable[str], categories: Sequence[str]) -> dict[str, Any]:
    seen = list(labels)
    return {"n": len(seen), "categories": {c: share(seen.count(c), len(seen)) for c in categories}}


def summarise(run_dir: Path, study: Study) -> dict[str, Any]:
    """The summary of every study stored under the same name as ``study`` (several sheets)."""
    studies = {s.id: s for s in studies_of(run_dir, study.name)} or {study.id: study}
    lines = latest_ratings(read_ratings(run_dir, study.name), set(studies))
    items = {i.id: i for i in RunView(run_dir).items()}
    if study.kind == "pairwise":
        return _pairwise_summary(lines, studies, items)
    out: dict[str, Any] = {"kind": study.kind, "name": study.name, "n_lines": len(lines),
                           "raters": sorted({line["rater"] for line in lines}), "axes": {}}  # fmt: skip
    for axis in study.protocol.axes:
        rated = [line for line in lines if axis.name in line["ratings"]]
        out["axes"][axis.name] = _axis_summary(axis, rated, items)
    return out


def _axis_summary(
    axis: Axis, lines: list[dict[str, Any]], items: Mapping[str, Item]
) -> dict[str, Any]:
    labels = [o.label for o in axis.options]

    def cell(group: list[dict[str, Any]]) -> dict[str, Any]:
        return distribution((line["ratings"][axis.name] for line in group), labels)

    summary = cell(lines)
    summary["by"] = by_slice(lines, items, cell)
    summary["agreement"] = _agreement(
        lines, lambda line: float(line["values"][axis.name]), axis.level, axis.kappa_weights,
        axis.values,
    )  # fmt: skip
    return summary


def by_slice(
    lines: list[dict[str, Any]],
    items: Mapping[str, Item],
    cell: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """``cell`` per value of every item axis with 2..30 values among the rated items."""
    groups: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for line in lines:
        item = items.get(line["id"])
        for axis, value in (item.meta if item else {}).items():
            if axis != "image_id":
                groups[axis][value].append(line)
    return {
        axis: {value: cell(group) for value, group in sorted(values.items())}
        for axis, values in sorted(groups.items())
        if 2 <= len(values) <= MAX_SLICE_VALUES
    }


def _agreement(
    lines: list[dict[str, Any]],
    value: Callable[[dict[str, Any]], float],
    level: Any,
    weights: Any,
    labels: Sequence[float],
) -> dict[str, Any] | None:
    """Inter-rater agreement when at least two raters rated a shared item; else None."""
    per_rater: dict[str, dict[str, float]] = defaultdict(dict)
    for line in lines:
        per_rater[line["rater"]][f"{line['study']}/{line['id']}"] = value(line)
    if len(per_rater) < 2:
        return None
    result = rater_agreement(per_rater, level, weights, list(labels))
    return result if result["pairable_items"] else None


# -- side-by-side ------------------------------------------------------------------------------


def unblind(line: dict[str, Any], studies: Mapping[str, Study]) -> str:
    """The preference seen from run A: "A better" | "equal" | "B better"."""
    label = line["ratings"]["preference"]
    if label == "equal":
        return "equal"
    first = studies[line["study"]].extra["key"][line["id"]][0]
    better = first if label == "1 better" else ("B" if first == "A" else "A")
    return f"{better} better"


def preference_cell(prefs: list[str]) -> dict[str, Any]:
    n = len(prefs)
    cell = distribution(prefs, PREFERENCE_LABELS)
    cell["equal_or_better"] = {
        "A": share(prefs.count("A better") + prefs.count("equal"), n),
        "B": share(prefs.count("B better") + prefs.count("equal"), n),
    }
    return cell


def _pairwise_summary(
    lines: list[dict[str, Any]], studies: Mapping[str, Study], items: Mapping[str, Item]
) -> dict[str, Any]:
    lines = [line for line in lines if "preference" in line["ratings"]]
    study = next(iter(studies.values()))

    def cell(group: list[dict[str, Any]]) -> dict[str, Any]:
        return preference_cell([unblind(line, studies) for line in group])

    by_rater: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        by_rater[line["rater"]].append(line)
    codes = {"A better": 1.0, "equal": 0.0, "B better": -1.0}
    return {
        "kind": "pairwise", "name": study.name,
        "run_a": study.extra["run_a"], "run_b": study.extra["run_b"],
        "raters": sorted(by_rater),
        "preference": cell(lines),
        "by": by_slice(lines, items, cell),
        "by_rater": {rater: cell(group) for rater, group in sorted(by_rater.items())},
        "agreement": _agreement(lines, lambda line: codes[unblind(line, studies)], "ordinal",
                                "quadratic", [-1.0, 0.0, 1.0]),
    }  # fmt: skip
