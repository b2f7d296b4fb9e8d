"""The study's index page, ``study.html`` and ``study.md``: every run with its score and report,
every judge, every board, the models × benchmarks matrix, the cost, and why the study stopped.

Labels, specs and messages come from a user's file and servers: every one is escaped (HTML by
``html.escape``, markdown by ``md_text``); links are the study's own relative paths, escaped too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.report.html_assets import STYLE
from medlens.report.html_format import esc
from medlens.report.md_format import md_text, table
from medlens.report.percent_text import percent, percent_ci
from medlens.runs.files import write_atomic
from medlens.study.budget import spent_line
from medlens.study.outputs import ACROSS, BoardFile
from medlens.study.plan import StudyPlan

Cell = tuple[str, str | None]
"""(text, link or None)."""


@dataclass(frozen=True)
class Section:
    title: str
    headers: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    notes: Sequence[str] = ()


def score_text(entry: dict[str, Any]) -> tuple[str, str]:
    score, ci = entry.get("score"), entry.get("ci")
    return (percent(score) if score is not None else "–", percent_ci(ci) if ci else "–")


def run_section(plan: StudyPlan, data: dict[str, Any], reports: dict[str, str]) -> Section:
    rows = []
    for key, job in plan.runs.items():
        state = data["runs"].get(key, {})
        score, ci = score_text(state)
        answered = f"{state.get('answered', '–')}/{state.get('items', '–')}"
        rows.append([
            (key, None), (job.model, None), (job.benchmark, None), (state.get("state", "pending"), None),
            (answered, None), (score, None), (ci, None), (str(state.get("n", "–")), None),
            (str(state.get("errors") or 0), None),
            ("report", reports[key]) if key in reports else ("–", None),
        ])  # fmt: skip
    headers = ["run", "model", "benchmark", "state", "answered", "score", "95% CI", "n",
               "errors", "report"]  # fmt: skip
    sampled = [key for key, job in plan.runs.items() if job.sample]
    notes = [f"{', '.join(sampled)}: scores on the study's design subset of their benchmark; "
             "their full-benchmark estimates are on the boards and below"] if sampled else []  # fmt: skip
    return Section("Runs", headers, rows, notes)


def judge_section(data: dict[str, Any]) -> Section | None:
    rows = []
    for key, state in data["judges"].items():
        run, _, judge = key.rpartition("/")
        score, ci = score_text(state)
        rule = state.get("rule_score")
        rows.append([
            (run, None), (judge, None), (state.get("state", "pending"), None), (score, None),
            (ci, None), (str(state.get("n", "–")), None),
            (percent(rule) if rule is not None else "–", None), (str(state.get("calls", "–")), None),
        ])  # fmt: skip
    if not rows:
        return None
    headers = ["run", "judge", "state", "judged score", "95% CI", "n", "rule score", "calls"]
    return Section("Judges", headers, rows, ["judged scores sit beside rule scores, never instead"])


def board_section(boards: list[BoardFile]) -> Section | None:
    rows = []
    for board in boards:
        links = [(fmt, board.files[fmt]) if fmt in board.files else ("–", None)
                 for fmt in ("html", "md", "json")]  # fmt: skip
        rows.append([(board.name, None), (board.benchmark or "all", None),
                     (str(len(board.runs)), None), *links, ("; ".join(board.notes), None)])  # fmt: skip
    if not rows:
        return None
    return Section("Boards", ["board", "benchmark", "runs", "html", "md", "json", "notes"], rows)


def across_section(plan: StudyPlan, boards: list[BoardFile]) -> Section | None:
    """The across board's cells, under the study's model and benchmark labels."""
    board = next((b.board for b in boards if b.name == ACROSS and b.board), None)
    if board is None:
        return None
    cells = {}
    for cell in board["across"]["cells"]:
        job = plan.runs.get(cell["run"])
        if job is not None:
            cells[(job.model, job.benchmark)] = cell
    benchmarks = [b for b in plan.study.benchmarks if any(k[1] == b for k in cells)]
    rows = []
    for model in (m for m in plan.study.models if any(k[0] == m for k in cells)):
        row: list[Cell] = [(model, None)]
        for bench in benchmarks:
            c = cells.get((model, bench))
            row.append((_cell_text(c), None))
        rows.append(row)
    notes = ["score [95% CI], n: finished runs only"]
    if any(c.get("estimated") for c in cells.values()):
        notes.append("estimated from N items: a sampled model's full-benchmark estimate (AIPW, "
                     "design-based 95% interval) from the study's design subset")  # fmt: skip
    return Section("Models × benchmarks", ["model", *benchmarks], rows, notes)


def _cell_text(c: dict[str, Any] | None) -> str:
    if c is None:
        return "–"
    if c.get("estimated"):
        if c["score"] is None:
            return f"no estimate (n={c['n']})"
        return f"{percent(c['score'])} [{percent_ci(c['ci'])}] {c['estimated']}"
    return f"{percent(c['score'])} [{percent_ci(c['ci'])}] n={c['n']}"


def head_lines(plan: StudyPlan, data: dict[str, Any]) -> list[str]:
    study = plan.study
    lines = [
        f"study file: {study.path} (sha256 {study.sha256[:12]}), medlens {data['medlens_version']}"
    ]
    cost = data.get("cost") or {}
    if cost.get("spent"):
        lines.append(spent_line(cost))
    if data.get("stop"):
        message = data["stop"]["message"]
        tail = "" if "rerun" in message else " (rerun the same command to continue)"
        lines.append(f"stopped: {message}{tail}")
    return lines


def write_index(
    plan: StudyPlan, data: dict[str, Any], reports: dict[str, str], boards: list[BoardFile]
) -> tuple[Path, Path]:
    """Write study.md and study.html into the study folder; their paths."""
    sections = [run_section(plan, data, reports), judge_section(data), board_section(boards),
                across_section(plan, boards)]  # fmt: skip
    shown = [s for s in sections if s is not None]
    title = f"medlens study {plan.study.name}"
    lines = head_lines(plan, data)
    md_path, html_path = plan.folder / "study.md", plan.folder / "study.html"
    write_atomic(md_path, markdown(title, lines, shown))
    write_atomic(html_path, html_page(title, lines, shown))
    return md_path, html_path


def markdown(title: str, lines: list[str], sections: list[Section]) -> str:
    parts = [f"# {md_text(title)}", "\n".join(f"- {md_text(line)}" for line in lines)]
    for section in sections:
        rows = [[_md_cell(cell) for cell in row] for row in section.rows]
        parts.append(f"## {md_text(section.title)}\n\n"
                     + table([md_text(h) for h in section.headers], rows, len(section.headers)))  # fmt: skip
        parts += [f"_{md_text(note)}_" for note in section.notes]
    return "\n\n".join(parts) + "\n"


def _md_cell(cell: Cell) -> str:
    text, link = cell
    return f"[{md_text(text)}]({link.replace(' ', '%20')})" if link else md_text(text)


def html_page(title: str, lines: list[str], sections: list[Section]) -> str:
    body = [
        f"<h1>{esc(title)}</h1>",
        "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>",
    ]
    for section in sections:
        head = "".join(f'<th class="text">{esc(h)}</th>' for h in section.headers)
        rows = "".join("<tr>" + "".join(f'<td class="text">{_html_cell(c)}</td>' for c in row)
                       + "</tr>" for row in section.rows)  # fmt: skip
        notes = "".join(f'<p class="note">{esc(note)}</p>' for note in section.notes)
        body.append(f"<h2>{esc(section.title)}</h2><table><thead><tr>{head}</tr></thead>"
                    f"<tbody>{rows}</tbody></table>{notes}")  # fmt: skip
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{esc(title)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )


def _html_cell(cell: Cell) -> str:
    text, link = cell
    return f'<a href="{esc(link)}">{esc(text)}</a>' if link else esc(text)
