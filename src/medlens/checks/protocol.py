"""Protocol checks of ``medlens check`` (issue 15): patient-level leakage across splits, the
gold-label distribution, and rare classes.

- **Patient leakage**: MultiMedBench-style sets split by patient; the same ``patient_id``,
  ``subject_id`` or ``study_id`` (case- and space-insensitive field names; also ``patient``,
  ``subject``) in two splits means a model tuned on one split has seen the patient of the
  other. Compared within the benchmark (items whose ``split`` differs) and against the
  loader's other splits. ``warn``, like shared images.
- **Gold labels**: the distribution of gold answers of every kind with a label set (option
  letters for choice items, yes/no/maybe, classification labels), ``info``; open answers are
  counted as distinct texts only.
- **Rare classes**: labels holding fewer than :data:`RARE_SHARE` of a kind's gold answers, whose
  per-class figures (macro-F1, per-class recall) rest on very few items: ``warn``.

Memory: one set of (field, id) per split and one counter per kind, bounded by the number of
distinct patients and labels.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from medlens.checks.result import SHOWN, CheckResult

if TYPE_CHECKING:
    from medlens.core.items import Benchmark, Item

RARE_SHARE = 0.03
PATIENT_FIELDS = ("patientid", "subjectid", "studyid", "patient", "subject")
"""Normalised field names (lower case, no ``_``/space/``-``) that identify a patient or study."""
_LABEL_KINDS = ("choice", "multi_choice", "yes_no", "classify")
_KEY = re.compile(r"[\s_\-]+")


def patient_ids(item: Item) -> set[tuple[str, str]]:
    """(field, id) pairs of the item's patient/subject/study identifiers."""
    found = set()
    for key, value in item.meta.items():
        name = _KEY.sub("", key).lower()
        if name in PATIENT_FIELDS and value.strip():
            found.add((name.removesuffix("id") + "_id", value.strip()))
    return found


class ProtocolTally:
    """What the protocol checks need, gathered in ``run_checks``'s one pass."""

    def __init__(self) -> None:
        self.patients: dict[str, set[tuple[str, str]]] = {}
        self.labels: dict[str, Counter[str]] = {}
        self.open_answers: Counter[str] = Counter()

    def add(self, item: Item) -> None:
        ids = patient_ids(item)
        if ids:
            self.patients.setdefault(item.meta.get("split", ""), set()).update(ids)
        if item.answer is None:
            return
        if item.kind in _LABEL_KINDS:
            self.labels.setdefault(item.kind, Counter())[gold_label(item)] += 1
        elif item.kind == "open":
            self.open_answers[" ".join(str(item.answer).lower().split())] += 1

    def checks(self, others: Sequence[Benchmark]) -> list[CheckResult]:
        return [
            patient_leakage_check(self.patients, others),
            label_distribution_check(self.labels, self.open_answers),
            rare_class_check(self.labels),
        ]


def gold_label(item: Item) -> str:
    """The gold as a class: letters (choice), yes/no/maybe, or the label text (classify)."""
    gold = str(item.answer)
    if item.kind == "classify":
        return " ".join(item.options.get(gold, gold).lower().split())
    return gold.strip().lower() if item.kind == "yes_no" else gold.strip().upper()


def _other_patients(others: Iterable[Benchmark]) -> dict[str, set[tuple[str, str]]]:
    found: dict[str, set[tuple[str, str]]] = {}
    for other in others:
        for item in other.items():
            ids = patient_ids(item)
            if ids:
                found.setdefault(other.split, set()).update(ids)
    return found


def patient_leakage_check(
    mine: dict[str, set[tuple[str, str]]], others: Sequence[Benchmark]
) -> CheckResult:
    if not mine:
        return CheckResult("patient_leakage", "info", "no patient, subject or study ids")
    splits = {**{f"other:{k}": v for k, v in _other_patients(others).items()}, **mine}
    names = sorted(splits)
    shared: dict[str, int] = {}
    examples: list[str] = []
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            both = splits[first] & splits[second]
            if both and first.removeprefix("other:") != second.removeprefix("other:"):
                pair = "/".join(sorted(n.removeprefix("other:") for n in (first, second)))
                shared[pair] = len(both)
                examples += [f"{pair}: {f}={v}" for f, v in sorted(both)[: SHOWN - len(examples)]]
    total = sum(len(ids) for ids in mine.values())
    data = {"ids": total, "shared": shared, "splits": [n.removeprefix("other:") for n in names]}
    if shared:
        summary = "the same patient/subject/study in two splits: " + ", ".join(
            f"{pair} ({count:,})" for pair, count in shared.items()
        )
        return CheckResult("patient_leakage", "warn", summary, tuple(examples), data)
    shown = ", ".join(n.removeprefix("other:") or "(no split)" for n in names)
    return CheckResult(
        "patient_leakage", "pass", f"{total:,} ids, none shared across splits ({shown})", data=data
    )


def label_distribution_check(
    labels: dict[str, Counter[str]], open_answers: Counter[str]
) -> CheckResult:
    details: list[str] = []
    data: dict[str, Any] = {}
    for kind, counts in sorted(labels.items()):
        total = sum(counts.values())
        top = counts.most_common(SHOWN)
        details.append(
            f"{kind}: "
            + ", ".join(f"{label} {n:,} ({n / total:.1%})" for label, n in top)
            + (f", … {len(counts) - len(top)} more" if len(counts) > len(top) else "")
        )
        data[kind] = dict(counts)
    if open_answers:
        total = sum(open_answers.values())
        details.append(f"open: {len(open_answers):,} distinct answers over {total:,} items")
        data["open_distinct"] = len(open_answers)
    if not details:
        return CheckResult("gold_labels", "info", "no gold answers")
    summary = (
        "; ".join(f"{kind} {len(counts)} classes" for kind, counts in sorted(labels.items()))
        or "open answers only"
    )
    return CheckResult("gold_labels", "info", summary, tuple(details), data)


def rare_class_check(labels: dict[str, Counter[str]]) -> CheckResult:
    rare: dict[str, dict[str, int]] = {}
    for kind, counts in labels.items():
        total = sum(counts.values())
        small = {label: n for label, n in counts.items() if n < RARE_SHARE * total}
        if small:
            rare[kind] = small
    if not rare:
        return CheckResult("rare_classes", "pass", f"no class under {RARE_SHARE:.0%} of its kind")
    details = tuple(
        f"{kind}: " + ", ".join(f"{label} ({n})" for label, n in sorted(small.items())[:SHOWN])
        for kind, small in sorted(rare.items())
    )
    count = sum(len(small) for small in rare.values())
    summary = (
        f"{count} classes under {RARE_SHARE:.0%} of their kind's items: per-class figures are thin"
    )
    return CheckResult("rare_classes", "warn", summary, details, {"rare": rare})
