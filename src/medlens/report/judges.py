"""The judge sections of every report: judged beside rule scores per slice, with CIs, and the
human-calibrated score beside the raw one; the per-dimension table of a rubric; a panel's
members; self-agreement, order flips, cached verdicts and every failed reply; judge warnings.

Each section is laid out once here as plain text cells; text, markdown and HTML only draw it.
Judged scores are printed on the scale of the run's own scores in that format (fractions such
as 0.533 in text, percentages in markdown, HTML and workbooks), so the two read side by side,
and each title names it; slices with n < 50 are marked ``*``. The rubric's dimension table keeps
its 0–10 points; agreement and position-flip rates are percentages.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medlens.judges.identity import served_switch_line
from medlens.scoring.closed_open import pairing_text
from medlens.stats.cells import DEFAULT_MIN_N


@dataclass(frozen=True)
class JudgeSection:
    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    notes: list[str]


@dataclass(frozen=True)
class Scale:
    """How a [0, 1] score is written: as a fraction (text reports, like the run's 0.533) or a
    percentage (markdown, HTML, workbooks, like the run's 53.3%)."""

    percent: bool = False

    @property
    def name(self) -> str:
        return "in %" if self.percent else "0–1"

    def value(self, value: float | None) -> str:
        if value is None:
            return "–"
        return f"{100 * value:.1f}%" if self.percent else f"{value:.3f}"

    def ci(self, ci: Sequence[float] | None) -> str:
        if ci is None:
            return "–"
        if self.percent:
            return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
        return f"[{ci[0]:.3f}, {ci[1]:.3f}]"

    def signed(self, value: float | None) -> str:
        if value is None:
            return "–"
        return f"{100 * value:+.1f}" if self.percent else f"{value:+.3f}"

    def signed_ci(self, ci: Sequence[float]) -> str:
        return f"[{self.signed(ci[0])}, {self.signed(ci[1])}]"


FRACTION, PERCENT = Scale(False), Scale(True)


def rate(value: float | None) -> str:
    """A rate (agreement, position flips) as a percentage in every format."""
    return "–" if value is None else f"{100 * value:.1f}%"


SLICE_HEADERS = ("slice", "n", "judged", "95% CI", "rules", "judged − rules", "judge errors")
SMALL_NOTE = f"* n < {DEFAULT_MIN_N}: a wide interval; read with care."


def failures_text(cell: dict[str, Any]) -> str:
    """`3 (empty 2, truncated 1)`: the items without a verdict, by why."""
    total = int(cell.get("judge_errors", 0))
    kinds = cell.get("judge_failures") or {}
    if not total or not kinds:
        return str(total)
    return f"{total} (" + ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in kinds.items()) + ")"


def slice_row(label: str, cell: dict[str, Any], scale: Scale = FRACTION) -> tuple[str, ...]:
    small = "*" if cell["n"] < DEFAULT_MIN_N else ""
    return (
        label,
        f"{cell['n']}{small}",
        scale.value(cell["score"]),
        scale.ci(cell["ci"]),
        scale.value(cell.get("rule_score")),
        scale.signed(cell.get("sensitivity")),
        failures_text(cell),
    )


def calibrated_row(entry: dict[str, Any], scale: Scale = FRACTION) -> tuple[str, ...] | None:
    """The human-anchored score (PPI) as a row under the raw overall one, when there is one."""
    found = (entry.get("calibration") or {}).get("calibrated")
    if not found or found.get("score") is None:
        return None
    label = f"overall, calibrated on {found['n_human']} human labels (PPI)"
    ci = found.get("ci")
    return (label, str(found["n_judged"]), scale.value(found["score"]), scale.ci(ci), "–", "–", "–")


def judge_title(name: str, entry: dict[str, Any], scale: Scale = FRACTION) -> str:
    protocol = entry["protocol"]["name"]
    marks = [(entry.get("calibration") or {}).get("label", "uncalibrated")]
    if entry.get("self_judged"):
        marks.insert(0, "self-judged")
    return (
        f"Judge {name}: {protocol} by {entry['judge'].split('?')[0]} (scores {scale.name}; "
        f"{', '.join(marks)})"
    )


def judge_sections(results: dict[str, Any], scale: Scale = FRACTION) -> list[JudgeSection]:
    """Every judge of the run: one slice table, plus a dimension table for rubrics and a member
    table for panels; scores on `scale` (the format's own, as the run's scores are written)."""
    sections: list[JudgeSection] = []
    for name, entry in (results.get("judges") or {}).items():
        rows = [slice_row("overall", entry["overall"], scale)]
        calibrated = calibrated_row(entry, scale)
        if calibrated is not None:
            rows.append(calibrated)
        for axis, cells in entry["by"].items():
            rows += [slice_row(f"{axis}={value}", cell, scale) for value, cell in cells.items()]
        notes = judge_notes(name, entry, scale)
        if any(row[1].endswith("*") for row in rows):
            notes.append(SMALL_NOTE)
        sections.append(JudgeSection(judge_title(name, entry, scale), SLICE_HEADERS, rows, notes))
        if entry["dimensions"]:
            sections.append(dimension_section(name, entry))
        if entry.get("panel"):
            sections.append(member_section(name, entry, scale))
    return sections


MEMBER_HEADERS = ("member", "judge", "n", "judged", "95% CI", "calls", "cached", "judge errors")


def member_section(name: str, entry: dict[str, Any], scale: Scale = FRACTION) -> JudgeSection:
    """Each member's own judged score beside the panel's, and how well they agree."""
    panel = entry["panel"]
    rows: list[tuple[str, ...]] = []
    for member, found in panel["members"].items():
        overall = found["overall"]
        rows.append((
            member, str(found["judge"]).split("?")[0], str(overall["n"]), scale.value(overall["score"]),
            scale.ci(overall["ci"]), str(overall.get("calls", 0)),
            str(overall.get("cached_verdicts", 0)), failures_text(overall),
        ))  # fmt: skip
    rule = (
        "majority of the members (a tie is unresolved)"
        if panel["combine"] == "majority"
        else ("mean of the members' scores")
    )
    notes = [f"panel verdict: {rule}; unresolved items: "
             f"{entry['overall'].get('judge_failures', {}).get('unresolved', 0)}"]  # fmt: skip
    agreement = panel.get("agreement") or {}
    if agreement.get("dimensions"):
        notes += inter_judge_lines(agreement)
    notes += agreement.get("not_computed", [])
    for member, found in panel["members"].items():
        if found.get("position_bias"):
            notes.append(position_line(member, found["position_bias"]))
    return JudgeSection(f"Judge {name}: panel members", MEMBER_HEADERS, rows, notes)


def position_line(name: str, bias: dict[str, Any]) -> str:
    return (
        f"position bias of {name} (--swap): {bias['flips']} of {bias['pairs']} items read "
        f"differently with the options in the other order, rate {rate(bias['rate'])} "
        f"(95% CI {PERCENT.ci(bias['ci'])}); flipped items are left out of the judged score"
    )


def dimension_section(name: str, entry: dict[str, Any]) -> JudgeSection:
    """Med-CMR's per-dimension open table: mean points per dimension (0–10) with weights."""
    weights = entry["protocol"].get("weights", {})
    agreement = (entry.get("self_agreement") or {}).get("mad") or {}
    rows: list[tuple[str, ...]] = []
    for dim, cell in entry["dimensions"].items():
        mad = agreement.get(dim)
        rows.append((
            dim,
            f"{weights.get(dim, 0):g}",
            str(cell["n"]),
            "–" if cell["score"] is None else f"{cell['score']:.2f}",
            "–" if cell["ci"] is None else f"[{cell['ci'][0]:.2f}, {cell['ci'][1]:.2f}]",
            "–" if not mad or mad["score"] is None else f"{mad['score']:.2f} (n={mad['n']})",
        ))  # fmt: skip
    headers = ("dimension", "weight", "n", "mean points", "95% CI", "repeats' mean abs. diff.")
    note = "Item score S = Σ wᵢ sᵢ / (10 · Σ wᵢ); rule-settled items have no dimension scores."
    return JudgeSection(f"Judge {name}: rubric dimensions", headers, rows, [note])


def judge_notes(name: str, entry: dict[str, Any], scale: Scale = FRACTION) -> list[str]:
    overall = entry["overall"]
    replies = entry.get("replies", {})
    saved = (
        f"the rules settled the rest and saved {overall['calls_saved']} calls"
        if entry.get("scope") == "unresolved"
        else "every item sent"
    )
    failed = ", ".join(
        f"{k.replace('_', ' ')} {n}" for k, n in (replies.get("failures") or {}).items()
    )
    notes = [
        f"{overall['calls']} judge calls and {overall.get('cached_verdicts', 0)} verdicts from "
        f"the response cache (not calls); {saved} (scope {entry.get('scope')}); "
        f"{replies.get('unparseable', 0)} unparseable and {replies.get('errors', 0)} failed "
        f"replies{f' ({failed})' if failed else ''}, each asked twice; "
        f"{overall['judge_errors']} items without a verdict are left out of the judged score "
        "(not scored 0)."
    ]
    switched = served_switch_line(name, entry.get("judge_fingerprint"))
    notes += [f"warning: {switched}"] if switched else []
    notes += calibration_notes(entry, scale)
    if replies.get("format_warnings"):
        notes.append(
            f"{replies['format_warnings']} verdicts without the 'Rationale:' the reply format "
            "asks for (counted: the [RESULT] was clean)"
        )
    agreement = (entry.get("self_agreement") or {}).get("agreement")
    if agreement and agreement["n"]:
        notes.append(
            f"self-agreement over {entry['self_agreement']['repeats']} repeats: "
            f"{rate(agreement['score'])} of repeat pairs agree "
            f"(n={agreement['n']}, 95% CI {PERCENT.ci(agreement['ci'])})"
        )
    if entry.get("position_bias"):
        notes.append(position_line(name, entry["position_bias"]))
    gap = entry.get("closed_open")
    if gap and gap.get("delta") is not None:
        notes.append(
            f"closed (rules) {scale.value(gap['closed'])} (n={gap['n_closed']}) vs open judged by "
            f"{name} {scale.value(gap['open'])} (n={gap['n_open']}): Δ {scale.signed(gap['delta'])}"
            + (" points" if scale.percent else "")
            + (f", 95% CI {scale.signed_ci(gap['delta_ci'])}" if gap.get("delta_ci") else "")
            + f" ({pairing_text(gap)})"
        )
    provenance = (entry.get("judge_fingerprint") or {}).get("provenance")
    if provenance:
        notes.append(f"protocol {entry['protocol']['name']}: {provenance}")
    if entry.get("self_judged"):
        notes.append("self-judged: the judge is the evaluated model (--allow-self-judge)")
    notes += [f"warning: {w}" for w in entry.get("warnings", [])]
    if entry.get("inter_judge"):
        notes += inter_judge_lines(entry["inter_judge"])
    if entry.get("inter_judge_note"):
        notes.append(entry["inter_judge_note"])
    return notes


def calibration_notes(entry: dict[str, Any], scale: Scale = FRACTION) -> list[str]:
    """The judge's calibration label and, with human labels, the calibrated vs raw score."""
    calibration = entry.get("calibration") or {}
    label = calibration.get("label", "uncalibrated")
    found = calibration.get("calibrated")
    if found and found.get("score") is not None:
        human = found.get("human_only")
        text = (
            f"{label}: raw judged {scale.value(found.get('raw'))} → calibrated "
            f"{scale.value(found['score'])} {scale.ci(found.get('ci'))} with {found['n_human']} "
            f"human labels of {found['n_judged']} items ({found['method']})"
        )
        if human:
            text += f"; human labels alone {scale.value(human['score'])} {scale.ci(human['ci'])}"
        return [text]
    return [f"{label}: {calibration.get('reason', '')}".rstrip(": ")]


def inter_judge_lines(agreement: dict[str, Any]) -> list[str]:
    """One line per dimension: Krippendorff's α with its CI, and each pair's κ (and ρ)."""
    judges = ", ".join(agreement.get("judges", []))
    lines = []
    for dimension, stats in agreement["dimensions"].items():
        text = f"inter-judge agreement ({judges}) on {dimension}: α {_number(stats['alpha'])}"
        text += f" {_interval(stats.get('alpha_ci'))}, items {stats['pairable_items']}"
        for pair in stats.get("pairs", []):
            text += f"; {' vs '.join(pair['raters'])}: κ {_number(pair['kappa'])}"
            text += f" {_interval(pair.get('kappa_ci'))}"
            if pair.get("spearman") is not None:
                text += f", ρ {_number(pair['spearman'])} {_interval(pair.get('spearman_ci'))}"
        lines.append(text)
    return lines


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _interval(bounds: Any) -> str:
    if not bounds or bounds[0] is None:
        return ""
    return f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def judge_text_lines(name: str, entry: dict[str, Any]) -> list[str]:
    """A short plain summary of one judge (printed by `medlens judge`)."""
    overall = entry["overall"]
    label = (entry.get("calibration") or {}).get("label", "uncalibrated")
    head = (
        f"judge {name} ({entry['protocol']['name']}, {label}"
        f"{', self-judged' if entry.get('self_judged') else ''}): judged "
        f"{FRACTION.value(overall['score'])} {FRACTION.ci(overall['ci'])} vs rules "
        f"{FRACTION.value(overall.get('rule_score'))} (n={overall['n']})"
    )
    lines = [head, *judge_notes(name, entry)]
    if entry.get("panel"):
        section = member_section(name, entry)
        lines += [f"member {row[0]} ({row[1]}): judged {row[3]} {row[4]}, n={row[2]}, "
                  f"{row[5]} calls, {row[6]} cached, judge errors {row[7]}"
                  for row in section.rows]  # fmt: skip
        lines += section.notes
    return lines


def text_blocks(results: dict[str, Any]) -> list[Any]:
    """rich Tables and note lines for the text report."""
    from rich.table import Table

    blocks: list[Any] = []
    for section in judge_sections(results):
        table = Table(title=section.title, title_justify="left")
        for index, header in enumerate(section.headers):
            table.add_column(header, justify="left" if index == 0 else "right")
        for row in section.rows:
            table.add_row(*row)
        blocks.append(table)
        blocks.extend(section.notes)
    return blocks


def markdown_section(results: dict[str, Any]) -> str:
    from medlens.report.md_format import md_text, table

    parts = []
    for section in judge_sections(results, PERCENT):
        rows = [tuple(md_text(cell) for cell in row) for row in section.rows]
        headers = [md_text(header) for header in section.headers]
        notes = "".join(f"\n\n{md_text(note)}" for note in section.notes)
        parts.append(f"## {md_text(section.title)}\n\n" + table(headers, rows) + notes)
    return "\n\n".join(parts)


def html_section(results: dict[str, Any]) -> str:
    from medlens.report.html_format import esc, table_html

    parts = []
    for section in judge_sections(results, PERCENT):
        rows = [[(cell, None) for cell in row] for row in section.rows]
        notes = "".join(f'<p class="note">{esc(note)}</p>' for note in section.notes)
        parts.append(f"<h2>{esc(section.title)}</h2>" + table_html(section.headers, rows) + notes)
    return "".join(parts)
