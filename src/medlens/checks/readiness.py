"""Data readiness after DAIMS, scored where the data can answer and listed as manual elsewhere.

DAIMS ("Datasheets for AI and medical datasets", Zargari Marandi et al. 2025,
github.com/PERSIMUNE/DAIMS, section 4a of its datasheet) is a 24-item checklist of data
standardisation requirements written for tabular data. medlens maps the items a benchmark's
items can answer onto checks (some from ``medlens check``'s own results, the rest from one
streaming pass here); the others are listed as manual. The score is the count of computed
items that pass, out of those computed: a count, not an estimate, so it carries no interval.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from medlens.checks.result import CheckResult
from medlens.core.items import CANONICAL_AXES, Item

DAIMS_ITEMS: tuple[str, ...] = (
    "Wide format: each row is an instance, each column a variable",
    "Each patient has a unique identifier (ID)",
    "No Unicode characters",
    "No duplicate rows and columns",
    "First column is patient ID",
    "Last column is the outcome variable",
    "No thousands separators in numbers and no extra bracket characters",
    "All missing entries are indicated by the same entry",
    "No instance has all-missing variables",
    "A data dictionary (codebook) defines every variable, its type and units",
    "Continuous values lie within the ranges in the data dictionary",
    "Categorical variables have all their categories listed in the data dictionary",
    "Rare categories in categorical variables are grouped",
    "Perfectly collinear variables are removed",
    "Irrelevant observations that could skew results (outliers) are removed",
    "Date and time are formatted as described in the data dictionary",
    'Numerical entries have "." as decimal separator',
    "Non-English entries are translated; non-Latin scripts transformed to Latin",
    "Terms follow international standards (e.g. SNOMED CT, ICD)",
    "All entries of each variable follow the same standard",
    "Erroneous data are corrected or removed",
    "Informative missingness is properly encoded",
    "Variables irrelevant for the study are removed",
    "No sensitive data (names, addresses, identity numbers) are included",
)
"""The 24 DAIMS checklist items, in DAIMS's order (item n is DAIMS_ITEMS[n - 1])."""
DAIMS_SOURCE = "DAIMS datasheet §4a (Zargari Marandi et al. 2025, arXiv:2501.14094)"
RARE_N = 5
"""An axis value with fewer items than this is a rare category (DAIMS item 13)."""
MISSING_MARKERS = {"", "nan", "none", "null", "n/a", "na", "-", "missing", "unknown"}
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?$")
_COMMA_DECIMAL = re.compile(r"^-?\d+,\d{1,2}$")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_PHONE = re.compile(r"\b\(?\d{3}\)?[-.\s]\d{3}[-.\s]\d{4}\b")
_SSN = re.compile(r"\b\d{3}-\d{2}-\d{4}\b")
_SHOWN = 5
_AXES = frozenset(CANONICAL_AXES) - {"image_id", "split"}


def _non_latin(text: str) -> bool:
    return any(ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN") for ch in text)


@dataclass
class ReadinessTally:
    """What the data-computable DAIMS items need, gathered item by item (bounded memory)."""

    count: int = 0
    rows: set[bytes] = field(default_factory=set)
    duplicate_rows: list[str] = field(default_factory=list)
    non_ascii: list[str] = field(default_factory=list)
    non_latin: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    sensitive: list[str] = field(default_factory=list)
    missing_markers: dict[str, Counter[str]] = field(default_factory=dict)
    thousands: list[str] = field(default_factory=list)
    comma_decimals: list[str] = field(default_factory=list)
    axis_values: dict[str, dict[str, int]] = field(default_factory=dict)
    n_ascii: int = 0
    n_latin: int = 0

    def add(self, item: Item) -> None:
        self.count += 1
        content = (item.kind, item.question, item.context, tuple(item.options.items()),
                   repr(item.answer), tuple((r.source, r.path, r.offset, r.name) for r in item.images),
                   tuple(sorted(item.meta.items())))  # fmt: skip
        digest = hashlib.blake2b(repr(content).encode(), digest_size=8).digest()
        if digest in self.rows:
            _note(self.duplicate_rows, item.id)
        self.rows.add(digest)
        text = " ".join([item.question, item.context or "", *item.options.values()])
        if not text.isascii():  # ASCII text is Latin script too: skip the per-character look
            self.n_ascii += 1
            _note(self.non_ascii, item.id)
            if _non_latin(text):
                self.n_latin += 1
                _note(self.non_latin, item.id)
        if not item.question.strip() and not item.options and not item.images:
            _note(self.empty, item.id)
        if _EMAIL.search(text) or _PHONE.search(text) or _SSN.search(text):
            _note(self.sensitive, item.id)
        self._add_meta(item)

    def _add_meta(self, item: Item) -> None:
        for key, value in item.meta.items():
            stripped = value.strip()
            if len(stripped) <= 7 and stripped.casefold() in MISSING_MARKERS:
                markers = self.missing_markers.get(key)
                if markers is None:
                    markers = self.missing_markers[key] = Counter()
                markers[stripped] += 1
            if "," in stripped:  # both number patterns need a comma: skip the regexes otherwise
                if _THOUSANDS.match(stripped):
                    _note(self.thousands, f"{item.id}: {key}={stripped}")
                if _COMMA_DECIMAL.match(stripped):
                    _note(self.comma_decimals, f"{item.id}: {key}={stripped}")
            if key in _AXES:
                counts = self.axis_values.get(key)
                if counts is None:
                    counts = self.axis_values[key] = {}
                if stripped in counts:
                    counts[stripped] += 1
                elif len(counts) < 500:
                    counts[stripped] = 1


def _note(bucket: list[str], text: str) -> None:
    bucket.append(text) if len(bucket) < 1000 else None


@dataclass(frozen=True)
class ReadinessItem:
    number: int
    status: str
    """``pass`` | ``fail`` (computed from the data) or ``manual``."""
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "item": DAIMS_ITEMS[self.number - 1],
                "status": self.status, "evidence": self.evidence}  # fmt: skip


def assess(tally: ReadinessTally, check_status: Mapping[str, str]) -> list[ReadinessItem]:
    """All 24 items: computed ones from `tally` and the checklist's statuses, others manual."""
    computed = {
        2: _from_check(check_status, "duplicate_ids", "item ids are unique", "duplicate item ids"),
        3: _flag(tally.non_ascii, "item(s) hold non-ASCII text", tally.n_ascii),
        4: _flag(tally.duplicate_rows, "item(s) repeat another item's content exactly"),
        7: _flag(tally.thousands, "metadata value(s) use thousands separators"),
        8: _missing_markers(tally),
        9: _flag(tally.empty, "item(s) have no question, options or image"),
        12: _from_check(
            check_status,
            "gold_in_options",
            "every gold answer is a listed option",
            "gold answers outside the options",
        ),
        13: _rare_values(tally),
        17: _flag(tally.comma_decimals, "metadata value(s) use a decimal comma"),
        18: _flag(tally.non_latin, "item(s) hold non-Latin script", tally.n_latin),
        20: _from_check(
            check_status,
            "axis_variants",
            "axis values are spelled consistently",
            "axis values differ only in case, spacing or punctuation",
        ),
        21: _from_check(
            check_status, "images_decode", "sampled images decode", "images that do not decode"
        ),
        24: _flag(tally.sensitive, "item(s) contain an e-mail, phone or SSN-like pattern"),
    }
    out = []
    for number in range(1, len(DAIMS_ITEMS) + 1):
        verdict = computed.get(number)
        if verdict is None:
            out.append(ReadinessItem(number, "manual", _manual_reason(number)))
        else:
            out.append(ReadinessItem(number, verdict[0], verdict[1]))
    return out


def _flag(found: Sequence[str], problem: str, count: int | None = None) -> tuple[str, str]:
    if not found:
        return "pass", "none found"
    return (
        "fail",
        f"{count if count is not None else len(found)} {problem} (e.g. {', '.join(found[:_SHOWN])})",
    )


def _from_check(
    statuses: Mapping[str, str], name: str, good: str, bad: str
) -> tuple[str, str] | None:
    status = statuses.get(name)
    if status is None:
        return None
    if status == "fail" or (name == "axis_variants" and status == "warn"):
        return "fail", f"{bad} (see check {name})"
    if status == "info":  # nothing to check (a text-only benchmark has no images to decode)
        return "pass", f"nothing to check (check {name})"
    return "pass", f"{good} (check {name})"


def _missing_markers(tally: ReadinessTally) -> tuple[str, str]:
    mixed = {k: sorted(c) for k, c in tally.missing_markers.items() if len(c) > 1}
    if not mixed:
        return "pass", "each field marks missing values one way"
    shown = "; ".join(
        f"{k}: {', '.join(repr(v) for v in vals)}" for k, vals in list(mixed.items())[:_SHOWN]
    )
    return "fail", f"fields mark missing values in several ways ({shown})"


def _rare_values(tally: ReadinessTally) -> tuple[str, str]:
    rare = [f"{axis}={value!r} ({n})" for axis, counter in sorted(tally.axis_values.items())
            for value, n in counter.items() if n < RARE_N and len(counter) > 1]  # fmt: skip
    if not rare:
        return "pass", f"every axis value has at least {RARE_N} items"
    return (
        "fail",
        f"{len(rare)} axis value(s) with fewer than {RARE_N} items (e.g. {', '.join(rare[:_SHOWN])})",
    )


def _manual_reason(number: int) -> str:
    if number in (1, 5, 6, 7, 10, 11, 14, 16, 23):
        return "tabular-data layout or codebook item: check by hand (not computable from items)"
    return "needs knowledge of how the data were collected: check by hand"


def readiness_summary(items: Sequence[ReadinessItem]) -> dict[str, Any]:
    """Score = computed items that pass / computed items; the manual ones listed."""
    computed = [i for i in items if i.status != "manual"]
    passed = [i for i in computed if i.status == "pass"]
    return {
        "source": DAIMS_SOURCE,
        "passed": len(passed),
        "computed": len(computed),
        "manual": [i.number for i in items if i.status == "manual"],
        "items": [i.to_json() for i in items],
    }


def readiness_check(tally: ReadinessTally, checks: Sequence[Any]) -> Any:
    """The `readiness` line of `medlens check` (status info: readiness never fails a check)."""
    items = assess(tally, {check.name: check.status for check in checks})
    summary = readiness_summary(items)
    computed = [
        f"{i.number:2}. [{i.status}] {DAIMS_ITEMS[i.number - 1]}: {i.evidence}"
        for i in items
        if i.status != "manual"
    ]
    manual = ", ".join(map(str, summary["manual"]))
    needs_human = [f"{n:2}. [needs a human] {DAIMS_ITEMS[n - 1]}" for n in summary["manual"]]
    details = (*computed, f"manual (not computable from the items): items {manual}", *needs_human)
    summary["score"] = f"{summary['passed']}/{len(DAIMS_ITEMS)}"
    text = (
        f"DAIMS data readiness {summary['score']} ({summary['passed']} of "
        f"{summary['computed']} computable items pass; items {manual} need a human) "
        f"({DAIMS_SOURCE})"
    )
    return CheckResult("readiness", "info", text, details, summary)
