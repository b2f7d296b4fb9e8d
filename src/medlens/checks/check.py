"""``medlens check``: the integrity checklist of a benchmark, computed in one streaming pass.

Memory stays bounded whatever the benchmark's size: items are never kept, ids are held as
8-byte digests, per-axis value counts stop at :data:`MAX_AXIS_VALUES` distinct values (beyond
that a field is free text, not an axis), the image sample is a fixed-size reservoir and images
are hashed one at a time.

Statuses: ``fail`` (an integrity error: the run's numbers would be wrong), ``warn`` (worth
knowing, e.g. images shared across splits, which the published VQA-RAD and SLAKE splits do),
``info`` (counts). ``--strict`` treats warnings as failures.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from medlens.checks.admission import (
    AdmissionFacts,
    admission_check,
    shipped_admission,
    sources_of,
)
from medlens.checks.leakage import _ContentHashes, _leakage_check
from medlens.checks.result import SHOWN, CheckResult, Status
from medlens.checks.vocabulary import Vocabulary, shipped_vocabulary, vocabulary_check
from medlens.checks.wording import WordingTally
from medlens.core.errors import ItemError
from medlens.core.items import (
    CANONICAL_AXES,
    GRANULARITIES,
    READING_FIELDS,
    Benchmark,
    ImageRef,
    Item,
    decode_image,
)
from medlens.core.lexicon import Lexicon
from medlens.sources.answerable import answerable_problems

MAX_AXIS_VALUES = 200
"""A meta field with more distinct values than this is free text and is not checked as an axis."""
SMALL_N = 50
"""Slices smaller than this are flagged (and never ranked as worst cells)."""
DEFAULT_SAMPLE = 32
LISTED = 1000
"""Items the ``answerable`` check lists at most (it lists every one, unlike the others' 10)."""
_FOLD = re.compile(r"[\W_]+")
_NOT_AXES = {"id", "qid", "index", "image_id", "image", "image_path", "image_name", "question_id",
             *READING_FIELDS}  # fmt: skip


@dataclass(frozen=True)
class CheckReport:
    """The whole checklist of one benchmark."""

    spec: str
    split: str
    n_items: int
    checks: tuple[CheckResult, ...]

    def failed(self, strict: bool = False) -> list[str]:
        """Names of the checks that fail (warnings too when ``strict``)."""
        bad = ("fail", "warn") if strict else ("fail",)
        return [check.name for check in self.checks if check.status in bad]

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "split": self.split,
            "n_items": self.n_items,
            "ok": not self.failed(strict),
            "failed": self.failed(strict),
            "checks": [check.to_json() for check in self.checks],
        }


class _Tally:
    """Everything the checklist needs, accumulated item by item in bounded memory."""

    def __init__(self, sample_size: int, seed: int) -> None:
        self.count = 0
        self.with_answer = 0
        self.without_answer: list[str] = []
        """Ids of the first items without a gold answer (bounded)."""
        self.ids: set[bytes] = set()
        self.duplicate_ids: list[str] = []
        self.gold_problems: list[str] = []
        self.unanswerable: list[str] = []
        """The first items no answer can be meaningful for (``sources.answerable``)."""
        self.unanswerable_count = 0
        self.kinds: Counter[str] = Counter()
        self.axes: dict[str, Counter[str]] = {}
        self.free_text: set[str] = set()
        self.without_images = 0
        self.sample: list[tuple[str, ImageRef]] = []
        self.images_seen = 0
        self.sample_size = sample_size
        self.rng = random.Random(seed)

    def add(self, item: Item) -> None:
        self.count += 1
        self.with_answer += item.answer is not None
        if item.answer is None and len(self.without_answer) < 1000:
            self.without_answer.append(item.id)
        self.kinds[item.kind] += 1
        digest = hashlib.blake2b(item.id.encode("utf-8"), digest_size=8).digest()
        if digest in self.ids:
            self.duplicate_ids.append(item.id)
        self.ids.add(digest)
        problem = gold_problem(item)
        if problem:
            self.gold_problems.append(f"{item.id}: {problem}")
        reasons = [why for name, why in answerable_problems(item) if name != "answer"]
        if reasons:  # an empty gold answer is gold_in_options' to list
            self.unanswerable_count += 1
            if len(self.unanswerable) < LISTED:
                self.unanswerable.append(f"{item.id}: {'; '.join(reasons)}")
        self._add_axes(item.meta)
        self._add_images(item)

    def _add_axes(self, meta: Mapping[str, str]) -> None:
        for key, value in meta.items():
            if key in self.free_text or key in _NOT_AXES:
                continue
            counter = self.axes.setdefault(key, Counter())
            counter[value] += 1
            if len(counter) > MAX_AXIS_VALUES:
                self.free_text.add(key)
                del self.axes[key]

    def _add_images(self, item: Item) -> None:
        if not item.images:
            self.without_images += 1
        for image in item.images:
            # Reservoir sampling keeps a uniform sample of every image seen, in fixed memory.
            self.images_seen += 1
            if self.sample_size <= 0 or len(self.sample) < self.sample_size:
                self.sample.append((item.id, image))
            else:
                slot = self.rng.randrange(self.images_seen)
                if slot < self.sample_size:
                    self.sample[slot] = (item.id, image)


def gold_problem(item: Item) -> str | None:
    """Why the item's gold answer is not a valid answer to it, or None when it is."""
    answer = item.answer
    if answer is None:
        return None
    if item.kind == "choice":
        return None if answer in item.options else f"gold {answer!r} is not among the options"
    if item.kind == "multi_choice":
        missing = [letter for letter in str(answer) if letter not in item.options]
        return f"gold letters {''.join(missing)!r} are not options" if missing else None
    if item.kind == "yes_no":
        allowed = item.meta.get("answer_set", "yes/no").split("/")
        return None if answer in allowed else f"gold {answer!r} is not one of {'/'.join(allowed)}"
    if item.kind == "classify":
        labels = item.meta.get("labels", "").split("|")
        return None if answer in labels else f"gold {answer!r} is not in the label set"
    if item.kind == "detect":
        if isinstance(answer, str) or not answer:
            return "gold is not a list of boxes"
        bad = [box for box in answer if len(box) != 4 or box[2] < box[0] or box[3] < box[1]]
        return f"boxes {bad} are not [x1, y1, x2, y2]" if bad else None
    return None if str(answer).strip() else "empty gold text"


def run_checks(
    benchmark: Benchmark,
    *,
    others: Sequence[Benchmark] = (),
    skipped: Sequence[str] = (),
    sample_size: int = DEFAULT_SAMPLE,
    seed: int = 0,
    on_item: Callable[[], None] | None = None,
    vocabulary: Vocabulary | None = None,
    lexicon: Lexicon | None = None,
    admission: AdmissionFacts | None = None,
) -> CheckReport:
    """Stream the benchmark once and return its checklist; ``others`` are checked for leakage.

    ``skipped`` names other splits that could not be opened (reported, not failed);
    ``on_item`` is called after each item (progress); ``vocabulary`` (default: the one that
    ships for the loader, GMAI-MMBench's) names axis values outside it; ``lexicon`` (default:
    the built-in one) is the wording lexicon of the ``wording`` check; ``admission`` (default:
    the shipped facts) the source admission facts.
    """
    from medlens.checks.protocol import ProtocolTally
    from medlens.checks.readiness import ReadinessTally, readiness_check

    tally = _Tally(sample_size, seed)
    protocol = ProtocolTally()  # issue 15: patient leakage, gold labels, rare classes
    readiness = ReadinessTally()
    wording = WordingTally(lexicon)
    hashes = _ContentHashes() if others else None
    for item in benchmark.items():
        tally.add(item)
        protocol.add(item)
        readiness.add(item)
        wording.add(item)
        if hashes is not None:
            hashes.add(item)
        if on_item is not None:
            on_item()
    checks = [
        _count_check(tally),
        _answers_check(tally, benchmark.has_answers),
        _duplicate_check(tally),
        _gold_check(tally, benchmark.has_answers),
        _answerable_check(tally),
        _decode_check(tally),
        _kinds_check(tally),
        _variants_check(tally),
        _granularity_check(tally),
        *(_leakage_check(hashes, other) for other in others if hashes is not None),
        *(
            [CheckResult("leakage", "info", "splits not compared", tuple(skipped))]
            if skipped
            else []
        ),
        _axis_counts_check(tally),
        *protocol.checks(others),
        *_reference_checks(benchmark, tally, vocabulary, wording, admission),
    ]
    checks.append(readiness_check(readiness, checks))  # DAIMS items, scored from the data
    return CheckReport(benchmark.spec, benchmark.split, tally.count, tuple(checks))


def _reference_checks(
    benchmark: Benchmark,
    tally: _Tally,
    vocabulary: Vocabulary | None,
    wording: WordingTally,
    admission: AdmissionFacts | None,
) -> list[CheckResult]:
    """Checks against what medlens knows of the benchmark: GMAI's official files, its axis
    vocabulary, MMBU's wording rules and each source's admission facts, in this order."""
    from medlens.checks.gmai_official import gmai_file_check
    from medlens.checks.published_counts import published_count_check

    checks = []
    official = gmai_file_check(benchmark, tally.axes, tally.count)  # issue 23
    if official is not None:
        checks.append(official)
    published = published_count_check(benchmark, tally.axes, tally.count)  # issue 47
    if published is not None:
        checks.append(published)
    vocabulary = vocabulary or shipped_vocabulary(benchmark.name)
    if vocabulary is not None:
        checks.append(vocabulary_check(tally.axes, vocabulary))
    sources = sources_of(benchmark.name, tally.axes.get("source", {}))
    return [*checks, wording.check(benchmark.name),
            admission_check(sources, admission or shipped_admission())]  # fmt: skip


def _count_check(tally: _Tally) -> CheckResult:
    if tally.count == 0:
        return CheckResult("item_count", "fail", "the benchmark has no items")
    return CheckResult("item_count", "pass", f"{tally.count:,} items", data={"n": tally.count})


def _answers_check(tally: _Tally, has_answers: bool) -> CheckResult:
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


def _duplicate_check(tally: _Tally) -> CheckResult:
    dupes = tally.duplicate_ids
    if dupes:
        summary = f"{len(dupes):,} duplicate item ids"
        return CheckResult(
            "duplicate_ids", "fail", summary, tuple(dupes[:SHOWN]), {"duplicates": dupes[:1000]}
        )
    return CheckResult("duplicate_ids", "pass", "every item id is unique")


def _gold_check(tally: _Tally, has_answers: bool) -> CheckResult:
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


def _answerable_check(tally: _Tally) -> CheckResult:
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


def _decode_check(tally: _Tally) -> CheckResult:
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


def _kinds_check(tally: _Tally) -> CheckResult:
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


def _variants_check(tally: _Tally) -> CheckResult:
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


def _granularity_check(tally: _Tally) -> CheckResult:
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


def _axis_counts_check(tally: _Tally) -> CheckResult:
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
