"""The judge sections of every report: judged beside rule scores per slice, with CIs; the
per-dimension table of a rubric; self-agreement; judge warnings.

Each section is laid out once here as plain text cells; text, markdown and HTML only draw it.
Judged scores are printed on the scale of the run's own scores in that format (fractions such
as 0.533 in text, percentages in markdown, HTML and workbooks), so the two read side by side;
slices with n < 50 are marked ``*``. The rubric's dimension table keeps its 0–10 points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from medlens.stats.cells import DEFAULT_MIN_N


@dataclass(frozen=True)
class JudgeSection:
    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    notes: list[str]


@dataclass(frozen=True)
class Scale:
    """How a [0, 1] score is written: as a fraction (text reports) or a percentage."""

    percent: bool = False

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


FRACTION, PERCENT = Scale(False), Scale(True)
SLICE_HEADERS = ("slice", "n", "judged", "95% CI", "rules", "judged − rules", "judge errors")
SMALL_NOTE = f"* n < {DEFAULT_MIN_N}: a wide interval; read with care."


def slice_row(label: str, cell: dict[str, Any], scale: Scale = FRACTION) -> tuple[str, ...]:
    small = "*" if cell["n"] < DEFAULT_MIN_N else ""
    return (
        label,
        f"{cell['n']}{small}",
        scale.value(cell["score"]),
        scale.ci(cell["ci"]),
        scale.value(cell.get("rule_score")),
        scale.signed(cell.get("sensitivity")),
        str(cell.get("judge_errors", 0)),
    )


def judge_sections(results: dict[str, Any], scale: Scale = FRACTION) -> list[JudgeSection]:
    """Every judge of the run: one slice table, plus a dimension table for rubrics."""
    sections: list[JudgeSection] = []
    for name, entry in (results.get("judges") or {}).items():
        protocol = entry["protocol"]["name"]
        rows = [slice_row("overall", entry["overall"], scale)]
        for axis, cells in entry["by"].items():
            rows += [slice_row(f"{axis}={value}", cell, scale) for value, cell in cells.items()]
        title = f"Judge {name}: {protocol} by {entry['judge'].split('?')[0]}"
        notes = judge_notes(name, entry, scale)
        if any(row[1].endswith("*") for row in rows):
            notes.append(SMALL_NOTE)
        sections.append(JudgeSection(title, SLICE_HEADERS, rows, notes))
        if entry["dimensions"]:
            sections.append(dimension_section(name, entry))
    return sections


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
    notes = [
        f"{overall['calls']} judge calls; {saved} (scope {entry.get('scope')}); "
        f"{replies.get('unparseable', 0)} unparseable and {replies.get('errors', 0)} failed "
        f"replies; {overall['judge_errors']} items without a verdict are left out of the "
        "judged score (not scored 0)."
    ]
    agreement = (entry.get("self_agreement") or {}).get("agreement")
    if agreement and agreement["n"]:
        notes.append(
            f"self-agreement over {entry['self_agreement']['repeats']} repeats: "
            f"{PERCENT.value(agreement['score'])} of repeat pairs agree "
            f"(n={agreement['n']}, 95% CI {PERCENT.ci(agreement['ci'])})"
        )
    gap = entry.get("closed_open")
    if gap and gap.get("delta") is not None:
        notes.append(
            f"closed (rules) {scale.value(gap['closed'])} (n={gap['n_closed']}) vs open judged "
            f"by {name} {scale.value(gap['open'])} (n={gap['n_open']}): Δ "
            f"{scale.signed(gap['delta'])}" + (" points" if scale.percent else "")
        )
    notes += [f"warning: {w}" for w in entry.get("warnings", [])]
    if entry.get("inter_judge"):
        notes += inter_judge_lines(entry["inter_judge"])
    return notes


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
    head = (
        f"judge {name} ({entry['protocol']['name']}): judged {FRACTION.value(overall['score'])} "
        f"{FRACTION.ci(overall['ci'])} vs rules {FRACTION.value(overall.get('rule_score'))} "
        f"(n={overall['n']})"
    )
    return [head, *judge_notes(name, entry)]


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
