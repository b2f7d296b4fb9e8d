"""The board as one self-contained HTML file: sortable tables, a forest plot of scores with
their CIs and a heatmap of models × axis values, both inline SVG (no network, no images).

Run names and model specs are untrusted (a folder may be called ``<script>…``): every one is
written through ``html.escape``, in tables and inside the SVG ``<text>`` elements alike.
"""

from __future__ import annotations

from typing import Any

from medlens.report.board_layout import all_tables
from medlens.report.board_sections import BoardTable, board_title, run_labels
from medlens.report.html_assets import SCRIPT, STYLE
from medlens.report.html_format import esc, table_html
from medlens.report.viewer.links import VIEWER_URL, list_url

ROW_HEIGHT = 22
LABEL_WIDTH = 260
"""At least this wide; wider when a label needs it, so none is cut at the SVG's edge."""
CHAR_WIDTH = 7.5
"""A generous average width of one 12 px system-ui character."""
PLOT_WIDTH = 520
PAGE_PIXELS = 1000
"""A heatmap wider than this turns so that the axis's values are its rows."""
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


_EXTRA_STYLE = (
    "svg { display: block; margin: 6px 0 16px; max-width: 100%; height: auto; } "
    "svg text { font: 12px system-ui; } "
    "th { white-space: normal; } div.fit { max-width: 100%; overflow-x: auto; }"
)
"""Plots scale down to the page; table headers wrap, and a table still wider scrolls inside
its own box instead of pushing the page sideways."""


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
    return f'<h2 id="{esc(section.key)}">{esc(section.title)}</h2><div class="fit">{table}</div>{notes}'


def label_width(labels: list[str]) -> int:
    """Room left of the plot for the longest label (right-aligned against the plot)."""
    longest = max((len(label) for label in labels), default=0)
    return max(LABEL_WIDTH, round(CHAR_WIDTH * longest) + 16)


def _x(value: float, left: int = LABEL_WIDTH) -> float:
    return left + max(0.0, min(1.0, value)) * PLOT_WIDTH


def forest_svg(board: dict[str, Any]) -> str:
    """One line per model: its score (dot) and 95% CI (bar); chance as a dashed line;
    published reference scores as hollow diamonds (unranked)."""
    labels = run_labels(board)
    rows = [
        (f"{m['rank']}. {labels[m['run']]}", m["score"], m["ci"], False) for m in board["models"]
    ]
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
    return _svg("forest", "forest plot", width, height, parts)


def _svg(kind: str, label: str, width: float, height: float, parts: list[str]) -> str:
    """An SVG that scales down to the page's width (its viewBox keeps the drawing whole)."""
    return (f'<svg class="{kind}" xmlns="http://www.w3.org/2000/svg" width="{width:g}" '
            f'height="{height:g}" viewBox="0 0 {width:g} {height:g}" role="img" '
            f'aria-label="{label}">{"".join(parts)}</svg>')  # fmt: skip


def _axis_ticks(height: int, left: int) -> str:
    ticks = []
    for k in range(0, 11, 2):
        x = _x(k / 10, left)
        ticks.append(f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{height - ROW_HEIGHT}" '
                     f'stroke="#e6e9ed"/><text x="{x:.1f}" y="{height - 6}" '
                     f'text-anchor="middle">{10 * k}%</text>')  # fmt: skip
    return "".join(ticks)


def heatmap_svg(board: dict[str, Any], axis: str, values: dict[str, list[dict[str, Any]]]) -> str:
    """Runs (rows, ranked) × axis values (columns); colour and text give the score. With more
    values than runs and a drawing wider than the page, values are the rows instead (a heatmap
    of 18 departments × 3 runs reads down the page, not off its side)."""
    labels = run_labels(board)
    order = [m["run"] for m in board["models"]]
    columns = list(values)
    cells = {(run, value): next(c for c in values[value] if c["run"] == run)
             for value in columns for run in order}  # fmt: skip
    grid = [[(run, value) for value in columns] for run in order]
    row_names, column_names = [labels[run] for run in order], columns
    if len(columns) > len(order) and _heatmap_width(row_names, column_names) > PAGE_PIXELS:
        grid = [[(run, value) for run in order] for value in columns]
        row_names, column_names = columns, [labels[run] for run in order]
    left = label_width(row_names)
    # column labels are turned 40°: their height is sin 40° × their length
    header = max(90, round(0.65 * CHAR_WIDTH * max((len(c) for c in column_names), default=0)) + 16)
    parts = []
    for j, name in enumerate(column_names):
        x = left + j * CELL_WIDTH + CELL_WIDTH / 2
        parts.append(f'<text transform="translate({x:.1f},{header - 6}) rotate(-40)">'
                     f"{esc(name)}</text>")  # fmt: skip
    for i, (name, line) in enumerate(zip(row_names, grid, strict=True)):
        y = header + i * ROW_HEIGHT
        parts.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">{esc(name)}</text>')
        for j, (run, value) in enumerate(line):
            parts.append(_heat_cell(cells[run, value], left + j * CELL_WIDTH, y,
                                    f"{labels[run]} · {axis}={value}", list_url({axis: value}, of=run)))  # fmt: skip
    width = _heatmap_width(row_names, column_names)
    height = header + ROW_HEIGHT * len(row_names) + 10
    return _svg("heatmap", "heatmap", width, height, parts)


def _heatmap_width(row_names: list[str], column_names: list[str]) -> int:
    header = max(90, round(0.65 * CHAR_WIDTH * max((len(c) for c in column_names), default=0)) + 16)
    return label_width(row_names) + CELL_WIDTH * len(column_names) + 40 + header


def _heat_cell(cell: dict[str, Any], x: float, y: float, where: str, url: str) -> str:
    tip = f"{where}: n={cell['n']}, {100 * cell['score']:.1f}%"
    weight = ' font-weight="bold"' if cell["best"] else ""
    return (
        f'<a href="{esc(url)}">'
        f'<rect x="{x}" y="{y}" width="{CELL_WIDTH - 2}" height="{ROW_HEIGHT - 2}" '
        f'fill="{_colour(cell["score"])}"><title>{esc(tip)}</title></rect>'
        f'<text x="{x + CELL_WIDTH / 2 - 1:.1f}" y="{y + 15}" text-anchor="middle"{weight}>'
        f"{100 * cell['score']:.0f}</text></a>"
    )


def _colour(score: float) -> str:
    """White (0) to blue (1)."""
    level = max(0.0, min(1.0, score))
    red, green = int(255 - 180 * level), int(255 - 120 * level)
    return f"rgb({red},{green},255)"
