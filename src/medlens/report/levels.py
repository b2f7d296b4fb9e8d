"""``report --by AXES``: the levels view (``analysis.levels``) added to a rendered report.

The report proper is unchanged; the levels section follows it in text and markdown, sits before
the citations' closing in HTML (escaped, unsortable: the order is the tree's), and is the
``levels`` key of the JSON report. xlsx is refused before any work (its sheets are fixed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from medlens.analysis.levels import LevelRow, levels_of
from medlens.analysis.score_source import ScoreSource
from medlens.analysis.slices import DEFAULT_MIN_N, load_slice_table
from medlens.core.errors import SpecError
from medlens.report.html_format import esc, table_html
from medlens.report.md_format import md_text, table

LEVEL_FORMATS = ("text", "md", "html", "json")
HEADERS = ("level", "n", "score %", "95% CI")


def check_levels_format(fmt: str) -> None:
    if fmt not in LEVEL_FORMATS:
        raise SpecError(f"--by adds a levels section to {', '.join(LEVEL_FORMATS)} reports, "
                        f"not {fmt}")  # fmt: skip


def with_levels(rendered: str, fmt: str, run: Path, source: ScoreSource, by: str) -> str:
    """``rendered`` with the levels of ``by`` added in its own format."""
    levels, rows = levels_of(load_slice_table(run, source), by, DEFAULT_MIN_N)
    title = "by " + " → ".join(levels)
    if fmt == "json":
        data = json.loads(rendered)
        data["levels"] = {"by": levels, "rows": [row.to_json() for row in rows]}
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "md":
        body = table(HEADERS, [_cells(row, md_text) for row in rows])
        return rendered.rstrip("\n") + f"\n\n## {md_text(title)}\n\n{body}\n{_note(rows)}"
    if fmt == "html":
        shown = [[(text, None) for text in _cells(row, str)] for row in rows]
        section = f"<h2>{esc(title)}</h2>" + table_html(HEADERS, shown, sortable=False)
        section += f'<p class="note">{esc(_note(rows).strip())}</p>' if _note(rows) else ""
        head, tail = rendered.rsplit("<script>", 1)
        return f"{head}{section}<script>{tail}"
    return rendered.rstrip("\n") + "\n\n" + levels_text(levels, rows) + "\n"


def levels_text(levels: Sequence[str], rows: Sequence[LevelRow], min_n: int = DEFAULT_MIN_N) -> str:
    """The levels as plain text (``report --by`` and ``slice --by tree:LEVEL`` print this)."""
    return "\n".join(["by " + " → ".join(levels), *_text_lines(rows, min_n)])


def _cells(row: LevelRow, escape: object) -> list[str]:
    assert callable(escape)
    indent = "\u00a0\u00a0" * row.depth + ("→ " if row.depth else "")
    label = f"{indent}{escape(row.value)}{' *' if row.cell.small else ''}"
    return [label, str(row.cell.n), _percent(row.cell.score), _interval(row)]


def _text_lines(rows: Sequence[LevelRow], min_n: int) -> list[str]:
    width = max((len(r.value) + 2 * r.depth + 4 for r in rows), default=10)
    lines = []
    for row in rows:
        label = "  " * row.depth + ("→ " if row.depth else "") + row.value
        label += " *" if row.cell.small else ""
        lines.append(f"  {label:<{width}} n={row.cell.n:<6} {_percent(row.cell.score):>6}%  "
                     f"95% CI {_interval(row)}")  # fmt: skip
    return [*lines, *([_note(rows, min_n).strip()] if _note(rows, min_n) else [])]


def _note(rows: Sequence[LevelRow], min_n: int = DEFAULT_MIN_N) -> str:
    if not any(row.cell.small for row in rows):
        return ""
    return f"* n < {min_n} or too few images: read with care\n"


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _interval(row: LevelRow) -> str:
    ci = row.cell.ci
    return "–" if ci is None else f"{100 * ci[0]:.1f}–{100 * ci[1]:.1f}"
