"""The rows of the integrity checklist read out of one :class:`~medlens.checks.tally.ItemTally`:
item count, answers, duplicate ids, gold in options, answerable, image decoding, question
types, axis variants, granularity and axis counts (owns each row's status, summary and data)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from medlens.checks.result import SHOWN, CheckResult, Status
from medlens.checks.tally import LISTED, ItemTally
from medlens.core.errors import ItemError
from medlens.core.items import CANONICAL_AXES, GRANULARITIES, decode_image

SMALL_N = 50
"""Slices smaller than this are flagged (and never ranked as worst cells)."""
_FOLD = re.compile(r"[\W_]+")


def tally_checks(tally: ItemTally, has_answers: bool) -> list[CheckResult]:
    """The rows that need the tally alone, before leakage (in the checklist's order)."""
    return [
        _count_check(tally),
        _answers_check(tally, has_answers),
        _duplicate_check(tally),
        _gold_check(tally, has_answers),
        _answerable_check(tally),
        _decode_check(tally),
        _kinds_check(tally),
        _variants_check(tally),
        _granularity_check(tally),
    ]


def _count_check(tally: ItemTally) -> CheckResult:
    if tally.count == 0:
        return CheckResult("item_count", "fail", "the benchmark has no items")
    return CheckResult("item_count", "pass", f"{tally.count:,} items", data={"n": tally.count})


def _answers_check(tally: ItemTally, has_answers: bool) -> CheckResult:
    missing = tally.count - tally.with_answer
    data = {"with_answer": tally.with_answer, "without_answer": missing}
    if has_answers and missing:
        summary = f"{missing:,} item(s) lack a gold answer"
        details = tuple(f"item {item_id}" for item_id in tally.without_answer[:SHOWN])
        return CheckResult("answers", "fail", summary, details, data)
    if not has_answers and tally.with_answer:
        summary = f"{tally.with_answer:,} items carry answers on a split that hides them (TEST)"
        return CheckResult("answers", "fail", summary, data=data)
    summary = "every item has a gold answer" if has_answers else "no answers (TEST split)"
    return CheckResult("answers", "pass", summary, data=data)


def _duplicate_check(tally: ItemTally) -> CheckResult:
    dupes = tally.duplicate_ids
    if dupes:
        summary = f"{len(dupes):,} duplicate item ids"
        return CheckResult(
            "duplicate_ids", "fail", summary, tuple(dupes[:SHOWN]), {"duplicates": dupes[:1000]}
        )
    return CheckResult("duplicate_ids", "pass", "every item id is unique")


def _gold_check(tally: ItemTally, has_answers: bool) -> CheckResult:
    problems = tally.gold_problems
    if tally.with_answer == 0:
        summary = "no gold answers to check" + ("" if has_answers else " (TEST split)")
        return CheckResult("gold_in_options", "info", summary)
    if problems:
        return CheckResult(
            "gold_in_options",
            "fail",
            f"{len(problems):,} gold answers are invalid",
            tuple(problems[:SHOWN]),
            {"problems": problems[:1000]},
        )
    return CheckResult("gold_in_options", "pass", "every gold answer is among its options")


def _answerable_check(tally: ItemTally) -> CheckResult:
    """Every item a ``jsonl:`` run refuses for its question or options, listed in full (up to
    :data:`LISTED`): the refusal names a few and points here. A warning, not a failure: the
    published sets carry a few (MedMCQA's dev split: 21 items with two options alike), and a
    run of them scores as published; ``--strict`` fails on it."""
    count = tally.unanswerable_count
    if not count:
        summary = "every question has text or an image; choices have two or more distinct options"
        return CheckResult("answerable", "pass", summary)
    summary = f"{count:,} items have a blank question, one option or two options alike"
    if count > LISTED:
        summary += f" (the first {LISTED:,} listed)"
    return CheckResult("answerable", "warn", summary, tuple(tally.unanswerable),
                       {"count": count, "items": tally.unanswerable})  # fmt: skip


def _decode_check(tally: ItemTally) -> CheckResult:
    if not tally.sample:
        return CheckResult("images_decode", "info", "no images (text-only benchmark)")
    failures = []
    for item_id, image in tally.sample:
        try:
            decode_image(image.read_bytes(), name=image.name)
        except ItemError as exc:
            failures.append(f"{item_id}: {exc}")
    data = {"sampled": len(tally.sample), "images": tally.images_seen, "failed": len(failures)}
    summary = f"{len(tally.sample) - len(failures)}/{len(tally.sample)} sampled images decode"
    status: Status = "fail" if failures else "pass"
    return CheckResult("images_decode", status, summary, tuple(failures[:SHOWN]), data)


def _kinds_check(tally: ItemTally) -> CheckResult:
    kinds = dict(tally.kinds.most_common())
    single, multi = kinds.get("choice", 0), kinds.get("multi_choice", 0)
    summary = ", ".join(f"{kind} {n:,}" for kind, n in kinds.items()) or "none"
    if single or multi:
        summary += f" (single-answer {single:,}, multi-answer {multi:,})"
    return CheckResult("question_types", "info", summary, data={"kinds": kinds})


def suspicious_variants(values: Iterable[str]) -> list[list[str]]:
    """Groups of values that differ only in case, spacing or punctuation."""
    groups: dict[str, set[str]] = {}
    for value in values:
        groups.setdefault(_FOLD.sub("", value.casefold()), set()).add(value)
    return [sorted(group) for key, group in sorted(groups.items()) if len(group) > 1 and key]


def _variants_check(tally: ItemTally) -> CheckResult:
    found = {
        key: groups
        for key, counter in sorted(tally.axes.items())
        if (groups := suspicious_variants(counter))
    }
    if not found:
        return CheckResult("axis_variants", "pass", "no axis values differ only in case/spacing")
    details = tuple(
        f"{key}: " + "; ".join(" / ".join(repr(v) for v in g) for g in groups)
        for key, groups in found.items()
    )
    summary = f"values differing only in case, spacing or punctuation on {', '.join(found)}"
    return CheckResult("axis_variants", "fail", summary, details, {"variants": found})


def _granularity_check(tally: ItemTally) -> CheckResult:
    counts = dict(tally.axes.get("granularity", Counter()))
    if not counts:
        return CheckResult("granularity", "info", "no granularity axis")
    unknown = sorted(set(counts) - set(GRANULARITIES))
    covered = ", ".join(f"{g} {counts.get(g, 0):,}" for g in GRANULARITIES)
    if unknown:
        return CheckResult(
            "granularity", "fail", f"unknown granularity values {unknown}", data={"counts": counts}
        )
    missing = [g for g in GRANULARITIES if g not in counts]
    summary = covered + (f"; no {', '.join(missing)} items" if missing else "")
    return CheckResult("granularity", "info", summary, data={"counts": counts})


def axis_counts_check(tally: ItemTally) -> CheckResult:
    """Each axis's most frequent values, and how many values have fewer than SMALL_N items."""
    axes = {key: dict(counter.most_common()) for key, counter in tally.axes.items()}
    ordered = [a for a in CANONICAL_AXES if a in axes] + sorted(set(axes) - set(CANONICAL_AXES))
    details = []
    for key in ordered:
        small = sum(1 for n in axes[key].values() if n < SMALL_N)
        top = ", ".join(f"{_shown(v)} {n:,}" for v, n in list(axes[key].items())[:6])
        more = (
            f" … ({len(axes[key])} values, {small} with n < {SMALL_N})"
            if len(axes[key]) > 6
            else ""
        )
        details.append(f"{key}: {top}{more}")
    summary = f"{len(axes)} axes; free-text fields not counted: {len(tally.free_text)}"
    return CheckResult(
        "axis_counts",
        "info",
        summary,
        tuple(details),
        {"axes": {k: axes[k] for k in ordered}, "small_n": SMALL_N},
    )


def _shown(value: str, width: int = 40) -> str:
    """An axis value for the text checklist: long ones (SLAKE's organ-box JSON) cut short."""
    if not value:
        return "∅"
    return value if len(value) <= width else value[: width - 1] + "…"
