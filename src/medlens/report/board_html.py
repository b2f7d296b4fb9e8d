"""The board as one self-contained HTML file: sortable tables, a forest plot of scores with
their CIs and a heatmap of models × axis values, both inline SVG (no network, no images).

Run names and model specs are untrusted (a folder may be called ``<script>…``): every one is
written through ``html.escape``, in tables and inside the SVG ``<text>`` elements alike.
"""

from __future__ import annotations

from typing import Any

from medlens.report.board_layout import all_tables
from medlens.report.board_sections import BoardTable, board_title
from medlens.report.html_assets import SCRIPT, STYLE
from medlens.report.html_format import esc, table_html
from medlens.report.viewer.links import VIEWER_URL, list_url

ROW_HEIGHT = 22
LABEL_WIDTH = 260
"""At least this wide; wider when a label needs it, so none is cut at the SVG's edge."""
CHAR_WIDTH = 7.5
"""A generous average width of one 12 px system-ui character."""
PLOT_WIDTH = 520
CELL_WIDTH = 64
BOARD_SCRIPT = 'document.body.setAttribute("data-board", "1");'


def render_html(board: dict[str, Any]) -> str:
    title = board_title(board)
    body = [f"<h1>{esc(title)}</h1>", viewer_note(board)]
    if board.get("models"):
        body.append("<h2>Scores with 95% CIs</h2>" + forest_svg(board))
    for axis, values in board.get("by", {}).items():
        if values:
            body.append(f"<h2>Heatmap by {esc(axis)}</h2>" + heatmap_svg(board, axis, values))
    body += [_section(section) for section in all_tables(board)]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(title)}</title><style>{STYLE}{_EXTRA_STYLE}</style></head>"
        f"<body>{''.join(body)}<script>{SCRIPT}{BOARD_SCRIPT}</script></body></html>\n"
    )


_EXTRA_STYLE = "svg { display: block; margin: 6px 0 16px; } svg text { font: 12px system-ui; }"


def viewer_note(board: dict[str, Any]) -> str:
    """How to browse the board's items; heatmap cells link to the viewer's filtered lists."""
    if board.get("across"):
        return ""
    return (
        '<p class="note">Every item with its images and each run\'s answer side by side: '
        f"<code>medlens view RUN…</code> (it serves {esc(VIEWER_URL)}); a heatmap cell opens "
        "its items there.</p>"
    )


def _section(section: BoardTable) -> str:
    rows = [[(cell[0], cell[1]) for cell in row] for row in section.rows]
    notes = "".join(f'<p class="note">{esc(note)}</p>' for note in section.notes)
    table = table_html(section.headers, rows, text_columns=section.text_columns)
    return f'<h2 id="{esc(section.key)}">{esc(section.title)}</h2>{table}{notes}'


def label_width(labels: list[str]) -> int:
    """Room left of the plot for the longest label (right-aligned against the plot)."""
    longest = max((len(label) for label in labels), default=0)
    return max(LABEL_WIDTH, round(CHAR_WIDTH * longest) + 16)


def _x(value: float, left: int = LABEL_WIDTH) -> float:
    return left + max(0.0, min(1.0, value)) * PLOT_WIDTH


def forest_svg(board: dict[str, Any]) -> str:
    """One line per model: its score (dot) and 95% CI (bar); chance as a dashed line;
    published reference scores as hollow diamonds (unranked)."""
    rows = [(f"{m['rank']}. {m['name']}", m["score"], m["ci"], False) for m in board["models"]]
    rows += [(f"{r['model']} (published)", r["score"], None, True) for r in board["references"]]
    height = ROW_HEIGHT * (len(rows) + 2)
    left = label_width([row[0] for row in rows])
    parts = [_axis_ticks(height, left)]
    chance = board["chance"]["score"]
    if chance is not None:
        x = _x(chance, left)
        parts.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - ROW_HEIGHT}" '
                     'stroke="#c0392b" stroke-dasharray="4 3"><title>chance</title></line>')  # fmt: skip
    for i, (label, score, ci, published) in enumerate(rows):
        y = ROW_HEIGHT * (i + 1)
        parts.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{esc(label)}</text>')
        if ci:
            parts.append(f'<line x1="{_x(ci[0], left):.1f}" y1="{y}" x2="{_x(ci[1], left):.1f}" '
                         f'y2="{y}" stroke="#2c5d8f" stroke-width="2"/>')  # fmt: skip
        if score is None:
            continue
        x = _x(score, left)
        if published:
            parts.append(f'<path d="M{x:.1f},{y - 5} l5,5 l-5,5 l-5,-5 z" fill="none" '
                         'stroke="#555"/>')  # fmt: skip
        else:
            parts.append(f'<circle cx="{x:.1f}" cy="{y}" r="4" fill="#2c5d8f"/>')
    width = left + PLOT_WIDTH + 20
    return (f'<svg class="forest" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" role="img" aria-label="forest plot">{"".join(parts)}</svg>')  # fmt: skip


def _axis_ticks(height: int, left: int) -> str:
    ticks = []
    for k in range(0, 11, 2):
        x = _x(k / 10, left)
        ticks.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - ROW_HEIGHT}" '
                     f'stroke="#e6e9ed"/><text x="{x:.1f}" y="{height - 6}" '
                     f'text-anchor="middle">{10 * k}%</text>')  # fmt: skip
    return "".join(ticks)


def heatmap_svg(board: dict[str, Any], axis: str, values: dict[str, list[dict[str, Any]]]) -> str:
    """Models (rows, ranked) × axis values (columns); colour and text give the score."""
    names = {m["run"]: m["name"] for m in board["models"]}
    order = [m["run"] for m in board["models"]]
    columns = list(values)
    left = label_width([names[run] for run in order])
    # column labels are turned 40°: their height is sin 40° × their length
    header = max(90, round(0.65 * CHAR_WIDTH * max((len(c) for c in columns), default=0)) + 16)
    parts = []
    for j, value in enumerate(columns):
        x = left + j * CELL_WIDTH + CELL_WIDTH / 2
        parts.append(f'<text transform="translate({x:.1f},{header - 6}) rotate(-40)">'
                     f"{esc(value)}</text>")  # fmt: skip
    for i, run in enumerate(order):
        y = header + i * ROW_HEIGHT
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">'
                     f"{esc(names[run])}</text>")  # fmt: skip
        for j, value in enumerate(columns):
            cell = next(c for c in values[value] if c["run"] == run)
            x = left + j * CELL_WIDTH
            tip = f"{names[run]} · {axis}={value}: n={cell['n']}, {100 * cell['score']:.1f}%"
            weight = ' font-weight="bold"' if cell["best"] else ""
            parts.append(
                f'<a href="{esc(list_url({axis: value}, of=run))}">'
                f'<rect x="{x}" y="{y}" width="{CELL_WIDTH - 2}" height="{ROW_HEIGHT - 2}" '
                f'fill="{_colour(cell["score"])}"><title>{esc(tip)}</title></rect>'
                f'<text x="{x + CELL_WIDTH / 2 - 1:.1f}" y="{y + 15}" text-anchor="middle"{weight}>'
                f"{100 * cell['score']:.0f}</text></a>"
            )
    width = left + CELL_WIDTH * len(columns) + 40 + header
    height = header + ROW_HEIGHT * len(order) + 10
    return (f'<svg class="heatmap" xmlns="http://www.w3.org/2000/svg" width="{width}" '
            f'height="{height}" role="img" aria-label="heatmap">{"".join(parts)}</svg>')  # fmt: skip


def _colour(score: float) -> str:
    """White (0) to blue (1)."""
    level = max(0.0, min(1.0, score))
    red, green = int(255 - 180 * level), int(255 - 120 * level)
    return f"rgb({red},{green},255)"
