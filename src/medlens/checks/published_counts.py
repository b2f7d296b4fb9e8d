"""``medlens check`` on the multi-image and 3D sets: does this copy hold what the card publishes?

MMMU's medical subjects (items per subject and split, from the dataset card), MedFrameQA (2,851
questions, 9,237 frames) and M3D-VQA's test5k (5,000 questions). A match is ``pass``; another
count is ``warn`` (scores would not be comparable with published ones), naming both counts.
ReXVQA publishes no per-split count the loader could check against, and M3D-VQA's other splits
only their totals, so they get no line.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from medlens.checks.result import CheckResult
from medlens.core.items import Benchmark

NAME = "published_counts"


def published_count_check(benchmark: Benchmark, axes: Mapping[str, Counter[str]], rows: int
                          ) -> CheckResult | None:  # fmt: skip
    """The published-counts line of a benchmark's checklist (None where none is published)."""
    if benchmark.name == "mmmu":
        return _mmmu(benchmark.split, axes)
    if benchmark.name == "medframeqa":
        from medlens.sources.medframeqa import PUBLISHED

        frames = sum(int(n) * count for n, count in axes.get("n_images", Counter()).items())
        found = {"questions": rows, "frames": frames}
        wanted = {k: PUBLISHED[k] for k in found}
        return _line(f"{rows:,} questions, {frames:,} frames", found, wanted)
    if benchmark.name == "m3d-vqa" and benchmark.split == "test5k":
        from medlens.sources.m3dvqa import PUBLISHED as M3D

        kinds = axes.get("answer_type", Counter())
        questions = kinds.get("closed") or kinds.get("open") or 0
        return _line(
            f"{questions:,} questions", {"questions": questions}, {"questions": M3D["test5k"]}
        )
    return None


def _mmmu(split: str, axes: Mapping[str, Counter[str]]) -> CheckResult | None:
    from medlens.sources.mmmu import PUBLISHED_COUNTS

    published = PUBLISHED_COUNTS.get(split, {})
    found = dict(axes.get("subject", Counter()))
    wanted = {subject: published[subject] for subject in found if subject in published}
    if not wanted:
        return None
    shown = ", ".join(f"{s} {found[s]}" for s in wanted)
    return _line(f"{split}: {shown}", {s: found[s] for s in wanted}, wanted)


def _line(measured: str, found: Mapping[str, Any], wanted: Mapping[str, Any]) -> CheckResult:
    data = {"found": dict(found), "published": dict(wanted)}
    if dict(found) == dict(wanted):
        return CheckResult(NAME, "pass", f"{measured}: as published", data=data)
    differ = ", ".join(
        f"{k} {found[k]:,} (published {wanted[k]:,})" for k in wanted if found[k] != wanted[k]
    )
    return CheckResult(NAME, "warn", f"{measured}; differs from the card: {differ}", data=data)
