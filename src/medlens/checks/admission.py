"""Source admission: may each source of a benchmark be used to evaluate a model, are its gold
labels human-made, and was it released before the model's training cutoff?

The facts ship as ``data/admission/sources.toml`` (one table per loader or source name, only
what a cited source states; the rest reads "unknown"); a user's TOML file of the same shape
(``check --admission FILE``, ``run --admission FILE``, recorded in run.json) adds sources or
replaces a shipped one's fields. ``check`` prints one line per source and warns about a source
whose licence does not allow evaluation or whose labels are not human-made; the protocol card
gets a "source admission" row that also sets each release against the model's training cutoff
(``run --model-info cutoff=YYYY-MM``): a source released before the cutoff is likely in the
model's training data. A benchmark's sources are its loader and the values of its ``source``
axis (GMAI-MMBench's and MMBU's source datasets, a built benchmark's ``source`` column).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from medlens.checks.contamination import RELEASES
from medlens.checks.result import SHOWN, CheckResult, Status
from medlens.core.errors import InputError
from medlens.core.tomlfile import tomllib
from medlens.runs.layout import RUN_FILE

EVALUATION = ("allowed", "restricted", "not allowed", "unknown")
LABELS = ("human", "automatic", "mixed", "unknown")
SHIPPED = "data/admission/sources.toml"
_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
_CHOICES = {"evaluation": EVALUATION, "labels": LABELS}
_EVALUATION_TEXT = {
    "allowed": "licence allows evaluation",
    "not allowed": "licence does NOT allow evaluation",
    "restricted": "licence restricts evaluation",
    "unknown": "evaluation terms unknown",
}
_LABELS_TEXT = {
    "human": "labels human-made",
    "automatic": "labels NOT human-made (automatic)",
    "mixed": "labels partly automatic (mixed)",
    "unknown": "labels' origin unknown",
}


@dataclass(frozen=True)
class Admission:
    """What medlens knows about one source (empty strings: not known)."""

    source: str
    licence: str = ""
    evaluation: str = "unknown"
    evaluation_note: str = ""
    labels: str = "unknown"
    labels_note: str = ""
    released: str = ""

    @property
    def known(self) -> bool:
        return bool(self.licence or self.released) or "unknown" not in (
            self.evaluation, self.labels)  # fmt: skip

    def flags(self) -> list[str]:
        """Why the source should not be admitted as it is (empty when nothing is wrong)."""
        out = []
        if self.evaluation == "not allowed":
            out.append("its licence does not allow evaluation")
        if self.labels in ("automatic", "mixed"):
            out.append(f"its labels are not human-made ({self.labels})")
        return out

    def text(self, cutoff: str | None = None, with_cutoff: bool = False) -> str:
        """``name: evaluation allowed (licence); labels human-made; released 2018-11 …``."""
        if not self.known:
            return f"{self.source}: not known to medlens (licence, labels and release unknown)"
        note = "; ".join(part for part in (self.licence, self.evaluation_note) if part)
        evaluation = _EVALUATION_TEXT[self.evaluation] + (f" [{note}]" if note else "")
        parts = [evaluation, _LABELS_TEXT[self.labels]]
        parts.append(_release_text(self.released, cutoff, with_cutoff))
        return f"{self.source}: " + "; ".join(parts)


def _release_text(released: str, cutoff: str | None, with_cutoff: bool) -> str:
    if not released:
        return "release date unknown"
    if not with_cutoff:
        return f"released {released}"
    if cutoff is None:
        return f"released {released} (model training cutoff not given)"
    if released <= cutoff:
        return (
            f"released {released}, before the model's training cutoff {cutoff}: likely in its "
            "training data"
        )
    return f"released {released}, after the model's training cutoff {cutoff}"


@dataclass(frozen=True)
class AdmissionFacts:
    """Admission facts by folded source name (aliases included)."""

    by_name: Mapping[str, Admission]

    def lookup(self, source: str) -> Admission:
        found = self.by_name.get(_fold(source))
        if found is None:
            return Admission(source, released=RELEASES.get(source, ""))
        return replace(found, source=source, released=found.released or RELEASES.get(source, ""))

    def extended(self, other: AdmissionFacts) -> AdmissionFacts:
        """These facts with ``other``'s fields laid over them (a user's file over the shipped)."""
        merged = dict(self.by_name)
        for key, theirs in other.by_name.items():
            ours = merged.get(key)
            if ours is None:
                merged[key] = theirs
                continue
            merged[key] = replace(ours, **_given(theirs))
        return AdmissionFacts(merged)


def _given(admission: Admission) -> dict[str, str]:
    """The fields a user's table sets (those differing from an empty table's)."""
    empty = Admission("")
    names = [f.name for f in fields(Admission) if f.name != "source"]
    return {n: getattr(admission, n) for n in names if getattr(admission, n) != getattr(empty, n)}


def _fold(name: str) -> str:
    return re.sub(r"[\W_]+", "", name.casefold())


def parse_admission(data: Mapping[str, Any], where: str) -> AdmissionFacts:
    """Facts from a parsed TOML document; InputError names the file, table and field."""
    by_name: dict[str, Admission] = {}
    owner: dict[str, str] = {}
    for source, table in data.items():
        if not isinstance(table, dict):
            raise InputError(where, f"[{source}]", "expected a table of admission fields")
        facts = _admission(str(source), table, where)
        aliases = table.get("aliases", [])
        if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
            raise InputError(where, f"[{source}].aliases", "expected a list of names")
        for name in [str(source), *aliases]:
            key = _fold(name)
            if key in owner and owner[key] != source:
                problem = f"name {name!r} is already used by [{owner[key]}]"
                raise InputError(where, f"[{source}].aliases", problem)
            owner[key] = str(source)
            by_name[key] = facts
    return AdmissionFacts(by_name)


def _admission(source: str, table: Mapping[str, Any], where: str) -> Admission:
    known = {f.name for f in fields(Admission)} - {"source"}
    values: dict[str, str] = {}
    for key, value in table.items():
        if key == "aliases":
            continue
        if key not in known:
            expected = ", ".join(sorted(known | {"aliases"}))
            raise InputError(where, f"[{source}].{key}", f"unknown field (expected {expected})")
        if not isinstance(value, str):
            raise InputError(where, f"[{source}].{key}", "expected a string")
        if key in _CHOICES and value not in _CHOICES[key]:
            problem = f"{value!r} is not one of {', '.join(_CHOICES[key])}"
            raise InputError(where, f"[{source}].{key}", problem)
        if key == "released" and not _MONTH.match(value):
            raise InputError(where, f"[{source}].{key}", f"{value!r} is not a month YYYY-MM")
        values[key] = value
    return Admission(source, **values)


def admission_tables(path: str | Path) -> dict[str, Any]:
    """A user's admission file as checked TOML tables (what ``run --admission`` records)."""
    try:
        data = tomllib.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, "no such admission file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(path, None, f"not a TOML admission file ({exc})") from None
    parse_admission(data, str(path))
    return data


def load_admission(path: str | Path) -> AdmissionFacts:
    """A user's admission file; InputError names the file, table and field of a bad value."""
    return parse_admission(admission_tables(path), str(path))


@cache
def shipped_admission() -> AdmissionFacts:
    text = resources.files("medlens").joinpath(SHIPPED).read_text("utf-8")
    return parse_admission(tomllib.loads(text), SHIPPED)


def admission_facts(path: str | Path | None = None, recorded: Mapping[str, Any] | None = None
                    ) -> AdmissionFacts:  # fmt: skip
    """The shipped facts, with a run's recorded user facts and then a user file laid over."""
    facts = shipped_admission()
    if recorded:
        facts = facts.extended(parse_admission(recorded, f"{RUN_FILE} admission"))
    return facts.extended(load_admission(path)) if path is not None else facts


def sources_of(benchmark: str, source_values: Iterable[str]) -> list[str]:
    """The loader, then each distinct value of the ``source`` axis (in the order given)."""
    return list(dict.fromkeys([benchmark, *(v for v in source_values if v)]))


def admission_check(sources: list[str], facts: AdmissionFacts) -> CheckResult:
    """``check``'s admission line: one detail per known source, the unknown ones counted."""
    found = [facts.lookup(source) for source in sources]
    known = [a for a in found if a.known]
    unknown = [a.source for a in found if not a.known]
    flagged = [a for a in known if a.flags()]
    details = [a.text() for a in flagged] + [a.text() for a in known if not a.flags()]
    if unknown:
        shown = ", ".join(repr(s) for s in unknown[:SHOWN])
        more = f" and {len(unknown) - SHOWN} more" if len(unknown) > SHOWN else ""
        details.append(f"not known to medlens (give --admission FILE): {shown}{more}")
    status: Status = "warn" if flagged else "info"
    summary = f"{len(known)} of {len(found)} sources known"
    if flagged:
        summary += "; " + "; ".join(f"{a.source}: {', '.join(a.flags())}" for a in flagged)
    data = {"sources": [_as_json(a) for a in found], "flagged": [a.source for a in flagged]}
    return CheckResult("admission", status, summary, tuple(details), data)


def _as_json(admission: Admission) -> dict[str, Any]:
    out: dict[str, Any] = {f.name: getattr(admission, f.name) for f in fields(Admission)}
    return out | {"known": admission.known, "flags": admission.flags()}


def admission_text(sources: list[str], facts: AdmissionFacts, cutoff: str | None) -> str:
    """The card's "source admission" row: every known source, the unknown ones counted."""
    found = [facts.lookup(source) for source in sources]
    parts = [a.text(cutoff, with_cutoff=True) for a in found if a.known]
    unknown = [a.source for a in found if not a.known]
    if unknown:
        parts.append(f"{len(unknown)} source(s) not known to medlens ({', '.join(unknown[:3])}"
                     f"{', …' if len(unknown) > 3 else ''})")  # fmt: skip
    return ". ".join(parts)
