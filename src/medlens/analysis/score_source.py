"""Which per-item score a table reads (``--score SOURCE``): the rules', a judge's, or both.

- ``rules`` (the default): the score each record holds, as the run scored it.
- ``judge:NAME``: the judged scope only — answered items with a gold answer, of the kinds the
  judge's protocol judges (open answers under a rubric or equivalence judge) — each scored with
  the judge's verdict in [0, 1]. An item of the scope without a verdict (unparseable, errored or
  not judged yet) is left out of the score and counted: every judged cell carries its coverage
  (verdicts / scope), and a scope less than 90% covered gets a warning.
- ``combined:NAME``: every item; the judge's verdict on its scope, the rules' score elsewhere
  ("overall with judge", the number most papers print). Items of the scope without a verdict
  are left out, as above — never scored 0 and never given their rule score instead.

A judge's verdicts are read through :mod:`medlens.judges.verdicts` (``judged_item_scores``:
equivalence 1/0, rubric Σ wᵢsᵢ / (10·Σ wᵢ)); items the rules settled inside the stage
(``by: "rule"`` lines) keep their rule score, and the ``choice`` protocol (letters, not ratings)
scores each item by its lines' scores. Everything below works on records: a sourced run is the
run's items and records with ``score`` replaced, so every aggregate of results.json, slices,
comparisons and boards follows the chosen source unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError, SpecError
from medlens.core.items import Item
from medlens.core.records import Record

SOURCE_KINDS = ("rules", "judge", "combined")
COVERAGE_WARN = 0.9
"""Judged scores whose scope has verdicts on fewer than this share of its items are warned about."""


@dataclass(frozen=True)
class ScoreSource:
    """A parsed ``--score`` value."""

    kind: str = "rules"
    """``rules``, ``judge`` or ``combined``."""
    judge: str | None = None
    """The judge stage's name (``runs/<run>/judges/<name>/``); None for rules."""

    @property
    def label(self) -> str:
        """As the user writes it, and as JSON records it (``"score_source"``)."""
        return self.kind if self.judge is None else f"{self.kind}:{self.judge}"

    @property
    def judged(self) -> bool:
        return self.judge is not None

    def title(self) -> str:
        """What a table title says about its scores."""
        if self.kind == "judge":
            return f"scores: judge {self.judge} (judged scope only)"
        if self.kind == "combined":
            return f"scores: rules + judge {self.judge} (overall with judge)"
        return "scores: rules"


RULES = ScoreSource()


def parse_score_source(text: str | ScoreSource | None) -> ScoreSource:
    """``rules``, ``judge:NAME`` or ``combined:NAME`` → :class:`ScoreSource` (CLI and API)."""
    if text is None:
        return RULES
    if isinstance(text, ScoreSource):
        return text
    kind, colon, name = text.strip().partition(":")
    kind, name = kind.strip(), name.strip()
    if kind == "rules" and not colon:
        return RULES
    if kind in ("judge", "combined") and name:
        return ScoreSource(kind, name)
    raise SpecError(
        f"--score {text!r}: use rules, judge:NAME or combined:NAME (NAME: a judge of the run)"
    )


@dataclass(frozen=True)
class JudgedScores:
    """One judge stage's verdicts on one run."""

    name: str
    protocol: str
    scores: dict[str, float]
    """Item id → judged score in [0, 1], for the items with a verdict."""
    kinds: frozenset[str]
    """Item kinds the stage judges."""


def judge_kinds(meta: Mapping[str, Any], judged_kinds: Iterable[str]) -> frozenset[str]:
    """Item kinds a judge stage judges: its protocol's (built-in or file), plus the kinds of
    the items it has lines for (``--reports`` adds ``report``; a file protocol may be gone)."""
    name = str(meta["protocol"].get("name", ""))
    kinds: set[str] = set(judged_kinds)
    try:
        from medlens.judges.protocols import load_protocol

        kinds |= set(load_protocol(name).kinds)
    except MedlensError:
        pass  # a rubric file that moved: the judged items' kinds still say what it judges
    return frozenset(kinds)


def read_judged_scores(
    run_dir: Path | str, name: str, kind_of: Mapping[str, str], source: ScoreSource | None = None
) -> JudgedScores:
    """The verdicts of judge `name` on the run; `kind_of` maps item ids to item kinds.

    A run without that judge is refused naming the run, the judge and the judges it has. A
    finished one-repeat stage is read by ``analysis.judged_lines`` (pyarrow, the fields needed
    only); any other through ``judges.verdicts``.
    """
    from medlens.analysis.judged_lines import fast_verdicts
    from medlens.judges.verdicts import judge_dir, judged_item_scores, read_judge, read_judgements

    try:
        meta = read_judge(run_dir, name)
    except MedlensError as exc:
        prefix = f"--score {source.label}: " if source is not None else ""
        raise MedlensError(f"{prefix}{exc}") from None
    protocol = str(meta["protocol"].get("name", ""))
    fast = fast_verdicts(judge_dir(run_dir, name), meta)
    if fast is not None:
        scores = fast.scores  # rule-settled lines hold their rule score, as ok lines
    else:
        lines = read_judgements(run_dir, name)[1] if _needs_lines(meta) else []
        if protocol == "choice":
            scores = _line_scores(lines)
        else:
            scores = {**_rule_settled(lines), **judged_item_scores(run_dir, name)}
    kinds = judge_kinds(meta, {kind_of[i] for i in scores if i in kind_of})
    return JudgedScores(name, protocol, scores, kinds)


def _needs_lines(meta: Mapping[str, Any]) -> bool:
    """The stage's lines are read only where verdict values do not say everything: letters of
    the choice protocol, and rule-settled items of a rubric in scope ``unresolved``."""
    return meta["protocol"].get("name") == "choice" or meta.get("scope") == "unresolved"


def judge_points(
    run_dir: Path | str, name: str
) -> tuple[dict[str, dict[str, float]], list[str], dict[str, Any]]:
    """A rubric stage's points per dimension and item (``verdicts.judged_values``: mean of the
    ok repeats), its dimensions and judge.json; the fast path for a one-repeat stage."""
    from medlens.analysis.judged_lines import fast_verdicts
    from medlens.judges.verdicts import judge_dimensions, judge_dir, judged_values, read_judge

    meta = read_judge(run_dir, name)
    fast = fast_verdicts(judge_dir(run_dir, name), meta)
    if fast is not None:
        return fast.points, judge_dimensions(meta), meta
    values, dimensions, extra = judged_values(run_dir, name)
    return values, dimensions, extra["meta"]


def _rule_settled(lines: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Items the rules settled inside the stage (no call): their rule score."""
    return {
        str(line["id"]): float(line.get("score") or 0.0)
        for line in lines
        if line.get("by") == "rule" and line.get("status") == "ok"
    }


def _line_scores(lines: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Per item, the majority of its ok lines' scores (choice protocol: letters read by the
    judge, scored against the gold); a tie counts as wrong, as equivalence ties do."""
    seen: dict[str, list[float]] = {}
    for line in lines:
        if line.get("status") == "ok" and line.get("score") is not None:
            seen.setdefault(str(line["id"]), []).append(float(line["score"]))
    return {i: 1.0 if sum(v) / len(v) > 0.5 else 0.0 for i, v in seen.items()}


def in_judged_kinds(item: Item, kinds: Collection[str]) -> bool:
    """An item a judge of these kinds judges when answered (``judges.tasks.eligible``'s rule)."""
    if item.kind not in kinds or not isinstance(item.answer, str):
        return False
    return not (item.kind == "classify" and item.options)


def judged_scope(
    items: Iterable[Item], records: Mapping[str, Record], kinds: Collection[str]
) -> set[str]:
    """Ids of the judged scope: answered items (a record without error) of the judged kinds."""
    return {
        item.id
        for item in items
        if in_judged_kinds(item, kinds)
        and item.id in records
        and records[item.id].get("error") is None
    }


@dataclass(frozen=True)
class SourcedRun:
    """A run's items and records under a score source (records copied where scores change)."""

    source: ScoreSource
    items: list[Item]
    records: dict[str, Record]
    scope: frozenset[str] | None
    """Ids of the judged scope (None for rules)."""
    coverage: dict[str, Any] | None
    """``{"judge", "protocol", "verdicts", "scope", "share", "warning"}`` (None for rules)."""


def sourced_run(
    run_dir: Path | str, items: list[Item], records: dict[str, Record], source: ScoreSource
) -> SourcedRun:
    """The run as `source` scores it (see the module docstring)."""
    if not source.judged:
        return SourcedRun(source, items, records, None, None)
    assert source.judge is not None
    judged = read_judged_scores(run_dir, source.judge, {i.id: i.kind for i in items}, source)
    scope = judged_scope(items, records, judged.kinds)
    changed = {
        item_id: _with_score(records[item_id], judged.scores.get(item_id)) for item_id in scope
    }
    if source.kind == "judge":
        kept = [item for item in items if item.id in scope]
        out = {item.id: changed[item.id] for item in kept}
    else:
        kept, out = items, {**records, **changed}
    coverage = coverage_of(judged, scope, Path(run_dir).name)
    coverage["label"] = judge_label_hook(run_dir, judged.name)
    return SourcedRun(source, kept, out, frozenset(scope), coverage)


def _with_score(record: Record, score: float | None) -> Record:
    """The record scored `score` (None: no verdict, left out of scores); the VLMEvalKit
    reading is dropped, since it re-reads with rules what the judge now scores."""
    out = {key: value for key, value in record.items() if key != "vlmeval"}
    out["score"] = score
    return out


def coverage_of(judged: JudgedScores, scope: Collection[str], run: str) -> dict[str, Any]:
    """``{"judge", "protocol", "verdicts", "scope", "share", "warning"}`` of a judged scope."""
    verdicts = sum(1 for item_id in scope if item_id in judged.scores)
    return coverage_counts(judged, verdicts, len(scope), run)


def coverage_counts(judged: JudgedScores, verdicts: int, scope: int, run: str) -> dict[str, Any]:
    share = verdicts / scope if scope else None
    warning = None
    if share is not None and share < COVERAGE_WARN:
        warning = coverage_warning(run, judged.name, verdicts, scope)
    return {
        "judge": judged.name,
        "protocol": judged.protocol,
        "verdicts": verdicts,
        "scope": scope,
        "share": share,
        "warning": warning,
    }


def coverage_warning(run: str, judge: str, verdicts: int, scope: int) -> str:
    return (
        f"{run}: judge {judge} has verdicts on only {verdicts} of the {scope} items of its "
        f"scope ({100 * verdicts / scope:.1f}% < {100 * COVERAGE_WARN:.0f}%); judged scores "
        "speak for the judged items only (rerun `medlens judge` to resume)"
    )


def coverage_warnings(
    run: Path | str, source: ScoreSource, coverage: tuple[int, int] | None
) -> list[str]:
    """The low-coverage warning of a judged table over (verdicts, scope), or none."""
    if not source.judged or coverage is None or not coverage[1]:
        return []
    verdicts, scope = coverage
    if verdicts / scope >= COVERAGE_WARN:
        return []
    return [coverage_warning(Path(run).name, str(source.judge), verdicts, scope)]


def coverage_text(coverage: Mapping[str, Any] | None) -> str:
    """``coverage 3,950/4,000 (98.8%)`` for a judged cell; "" without one."""
    if not coverage or coverage.get("scope") is None:
        return ""
    verdicts, scope = int(coverage["verdicts"]), int(coverage["scope"])
    share = f" ({100 * verdicts / scope:.1f}%)" if scope else ""
    label = f", {coverage['label']}" if coverage.get("label") else ""
    return f"coverage {verdicts:,}/{scope:,}{share}{label}"


def judge_label_hook(run_dir: Path | str, judge: str) -> str | None:
    """The label a judged table prints beside its coverage: "uncalibrated" without an
    up-to-date agreement file, "weak agreement" below κ/ρ 0.6, "calibrated" otherwise
    (``judges.calibration.judge_calibration``), recorded as ``coverage["label"]`` by every
    judged source (results, compare, board, layouts)."""
    from medlens.judges.calibration import judge_calibration

    return str(judge_calibration(run_dir, judge)["label"])

