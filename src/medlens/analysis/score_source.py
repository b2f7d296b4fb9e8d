"""Which per-item score a table reads (``--score SOURCE``): the rules', a judge's, or both.

- ``rules`` (the default): the score each record holds, as the run scored it.
- ``judge:NAME``: the judged scope only — answered items with a gold answer, of the kinds the
  judge's protocol judges (open answers under a rubric or equivalence judge) — each scored with
  the judge's verdict in [0, 1]. An item of the scope without a usable verdict (unparseable,
  errored, an order flip, an unresolved tie, not judged yet) is left out of the score and
  counted: every judged cell carries its coverage (verdicts / scope, ``left_out``), and any
  missing verdict gets a warning.
- ``combined:NAME``: every item; the judge's verdict on its scope, the rules' score elsewhere
  ("overall with judge", the number most papers print). An item of the scope without a usable
  verdict keeps its rule score and is counted (``kept_rule_score``: "judged 252 of 300; 48 kept
  their rule score"), so a failing judge can never raise the score: the items it fails on are
  mostly those the rules counted wrong.

A judge's verdicts are read through ``judges.verdicts.read_verdicts`` (the one reading of a
judge stage: equivalence 1/0, rubric Σ wᵢsᵢ / (10·Σ wᵢ), repeats, ``--swap`` orders and panels
by ``combine.item_verdict``); items the rules settled inside the stage (``by: "rule"`` lines)
keep their rule score. Everything below works on records: a sourced run is the
run's items and records with ``score`` replaced, so every aggregate of results.json, slices,
comparisons and boards follows the chosen source unchanged.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.notation import bad, tagged
from medlens.core.records import Record

SOURCE_KINDS = ("rules", "judge", "combined")
COVERAGE_WARN = 0.9
"""Every scope item without a usable verdict is warned about; below this share the warning
also says the coverage is low."""


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
    kind, name, colon = tagged(text)
    if kind == "rules" and not colon:
        return RULES
    if kind in ("judge", "combined") and name:
        return ScoreSource(kind, name)
    raise bad("--score", text, "use rules, judge:NAME or combined:NAME (NAME: a judge of the run)")


@dataclass(frozen=True)
class JudgedScores:
    """One judge stage's verdicts on one run."""

    name: str
    protocol: str
    scores: dict[str, float]
    """Item id → judged score in [0, 1], for the items with a verdict."""
    kinds: frozenset[str]
    """Item kinds the stage judges."""
    missing: dict[str, str] = field(default_factory=dict)
    """Item id → why the stage holds no usable verdict for it (``verdicts.read_verdicts``)."""


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
    """The verdicts of judge `name` on the run (``verdicts.read_verdicts``, the one reading of
    a judge stage); `kind_of` maps item ids to item kinds. A run without that judge is refused
    naming the run, the judge and the judges it has."""
    from medlens.judges.verdicts import read_verdicts

    try:
        verdicts = read_verdicts(run_dir, name)
    except MedlensError as exc:
        prefix = f"--score {source.label}: " if source is not None else ""
        raise MedlensError(f"{prefix}{exc}") from None
    meta = verdicts.meta
    protocol = str(meta["protocol"].get("name", ""))
    given = [*verdicts.scores, *verdicts.missing]
    kinds = judge_kinds(meta, {kind_of[i] for i in given if i in kind_of})
    return JudgedScores(name, protocol, verdicts.scores, kinds, verdicts.missing)


def judge_points(
    run_dir: Path | str, name: str
) -> tuple[dict[str, dict[str, float]], list[str], dict[str, Any]]:
    """A rubric stage's points per dimension and item (``verdicts.judged_points``: mean of the
    ok repeats of the items with a verdict), its dimensions and judge.json."""
    from medlens.judges.verdicts import judged_points

    return judged_points(run_dir, name)


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
    verdicts = {item_id: judged.scores[item_id] for item_id in scope if item_id in judged.scores}
    changed = {item_id: _with_score(records[item_id], score) for item_id, score in verdicts.items()}
    if source.kind == "judge":
        kept = [item for item in items if item.id in scope]
        out = {item.id: changed.get(item.id, _with_score(records[item.id], None)) for item in kept}
    else:  # scope items without a usable verdict keep their rule record: a judge never flatters
        kept, out = items, {**records, **changed}
    coverage = coverage_of(judged, scope, Path(run_dir).name, source)
    coverage["label"] = judge_label_hook(run_dir, judged.name)
    return SourcedRun(source, kept, out, frozenset(scope), coverage)


def _with_score(record: Record, score: float | None) -> Record:
    """The record scored `score` (None: no verdict, left out of scores); the VLMEvalKit
    reading is dropped, since it re-reads with rules what the judge now scores."""
    out = {key: value for key, value in record.items() if key != "vlmeval"}
    out["score"] = score
    return out


def coverage_of(
    judged: JudgedScores, scope: Collection[str], run: str, source: ScoreSource | None = None
) -> dict[str, Any]:
    """The coverage object of a judged scope (see :func:`coverage_counts`)."""
    missing = [judged.missing.get(item_id, "not judged") for item_id in scope
               if item_id not in judged.scores]  # fmt: skip
    return coverage_counts(judged, len(scope) - len(missing), len(scope), run, source, missing)


def coverage_counts(
    judged: JudgedScores,
    verdicts: int,
    scope: int,
    run: str,
    source: ScoreSource | None = None,
    missing: Iterable[str] = (),
) -> dict[str, Any]:
    """``{"judge", "protocol", "verdicts", "scope", "share", "kept_rule_score", "left_out",
    "missing", "warning"}``: under ``combined:`` the scope items without a usable verdict keep
    their rule score (``kept_rule_score``), under ``judge:`` they are left out (``left_out``);
    ``missing`` counts them by why (order flip, unresolved, error, …); any of them warns."""
    share = verdicts / scope if scope else None
    combined = source is None or source.kind == "combined"
    without = scope - verdicts
    warning = coverage_warning(run, judged.name, verdicts, scope, combined) if without else None
    reasons: dict[str, int] = {}
    for reason in missing:
        reasons[reason] = reasons.get(reason, 0) + 1
    return {
        "judge": judged.name,
        "protocol": judged.protocol,
        "verdicts": verdicts,
        "scope": scope,
        "share": share,
        "kept_rule_score": without if combined else 0,
        "left_out": 0 if combined else without,
        "missing": dict(sorted(reasons.items())),
        "warning": warning,
    }


def coverage_warning(run: str, judge: str, verdicts: int, scope: int, combined: bool = True) -> str:
    """One line: how many scope items the judge scored and what became of the others."""
    without = scope - verdicts
    fate = "kept their rule score" if combined else "are left out of the judged score"
    low = (
        f" ({100 * verdicts / scope:.1f}% < {100 * COVERAGE_WARN:.0f}%)"
        if verdicts / scope < COVERAGE_WARN
        else ""
    )
    return (
        f"{run}: judge {judge} judged {verdicts:,} of {scope:,}{low}; {without:,} "
        f"{'item' if without == 1 else 'items'} without a usable verdict {fate} "
        "(rerun `medlens judge`, or `medlens judge --retry-errors`, to ask again)"
    )


def coverage_warnings(
    run: Path | str, source: ScoreSource, coverage: tuple[int, int] | None
) -> list[str]:
    """The missing-verdict warning of a judged table over (verdicts, scope), or none."""
    if not source.judged or coverage is None or not coverage[1]:
        return []
    verdicts, scope = coverage
    if verdicts >= scope:
        return []
    combined = source.kind == "combined"
    return [coverage_warning(Path(run).name, str(source.judge), verdicts, scope, combined)]


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
