"""`report --format html`: one self-contained file (inline CSS/JS, PNG plots as data URIs).

Model output is untrusted. Everything taken from the run is escaped with ``html.escape`` when
written as markup, and the per-item data travels as JSON inside a ``<script
type="application/json">`` element with ``<``, ``>``, ``&``, U+2028 and U+2029 written as
``\\uXXXX`` escapes, so no value can close the element or start markup; the page script puts it
into the DOM with ``textContent`` only.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlens.analysis.score_source import ScoreSource
from medlens.analysis.slice_cells import worst_interval_note
from medlens.analysis.slices import Cell
from medlens.report.html_assets import SCRIPT, STYLE
from medlens.report.html_format import Row, esc, safe_json, table_html
from medlens.report.judges import html_section as judges_html
from medlens.report.protocol_lines import protocol_lines, single_multi_line
from medlens.report.sections import (
    AxisRow,
    ReportData,
    build_report,
    closed_open_rows,
    fmt_diff_ci,
    images_text,
    percent,
    percent_ci,
    secondary_text,
)
from medlens.report.source_label import source_suffix
from medlens.report.viewer.links import VIEWER_URL
from medlens.stats.cells import DEFAULT_MIN_N, MIN_IMAGES

MAX_OUTPUT_CHARS = 4000
"""Longer model outputs are cut in the item browser (the run directory keeps them whole)."""
BROWSER_AXES = 6
"""Breakdown axes (GMAI's first) that get a filter in the per-item browser."""
PLOT_AXES = ("granularity", "department")


def render(run_dir: Path, score: ScoreSource | None = None) -> str:
    """The HTML report of the run at `run_dir` (its plots need the ``plots`` extra)."""
    from medlens.core.extras import require_feature

    require_feature("an HTML report (its plots)", "plots")
    run_dir = Path(run_dir)
    data = build_report(run_dir, score)
    from medlens.report.card import html_card, html_citations, protocol_card, with_run_rows

    card = with_run_rows(protocol_card(run_dir), data.protocol)
    body = [f"<h1>medlens report: {esc(run_dir.name)}</h1>", html_card(card)]
    if data.has_answers:
        body += [
            overall_section(data),
            plots_section(data),
            axes_section(data),
            closed_open_section(data),
            judges_html(data.results),
            worst_section(data),
        ]
    else:
        body.append(
            '<h2>Scores</h2><p class="answer-key">'
            + esc(data.results.get("no_answers_reason", "This split has no gold answers."))
            + f" {esc(data.export_lead)} <code>{esc(data.export_hint)}</code>.</p>"
        )
        body += [f'<p class="note">{esc(line)}</p>' for line in single_multi_line(data.results)]
    body += [deficiency_section(data), sensitivity_section(data), limitations_section(data)]
    body.append(browser_section(run_dir, data))
    body.append(html_citations(card))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>medlens report: {esc(run_dir.name)}</title><style>{STYLE}</style></head>"
        f"<body>{''.join(body)}<script>{SCRIPT}</script></body></html>\n"
    )


def overall_section(data: ReportData) -> str:
    overall = data.results["overall"]
    corrected = overall.get("chance_corrected")
    row = [
        (str(overall["n"]), overall["n"]),
        (percent(overall["score"]), overall["score"]),
        (percent_ci(overall.get("ci")), None),
        (percent(overall.get("random")), overall.get("random")),
        (images_text(data.results, overall), overall.get("images")),
        ("–" if corrected is None else f"{corrected:.3f}", corrected),
    ]
    headers = ("n", "score", "95% CI", "random baseline", "images", "chance-corrected")
    table = table_html(headers, [row], False, 0)
    secondary = secondary_text(data.results)
    extra = f'<p class="note">{esc(secondary)}</p>' if secondary else ""
    extra += "".join(f'<p class="note">{esc(line)}</p>' for line in protocol_lines(data.results))
    return f"<h2>{esc('Overall' + source_suffix(data.results))}</h2>" + table + extra


def closed_open_section(data: ReportData) -> str:
    rows: list[Row] = [[(cell, None) for cell in row] for row in closed_open_rows(data.results)]
    if not rows:
        return ""
    headers = ("slice", "closed score (n)", "open score (n)", "closed − open (points) [95% CI]")
    title = esc("Closed vs open answers" + source_suffix(data.results))
    return f"<h2>{title}</h2>" + table_html(headers, rows)


def _number(value: float | None) -> float | str:
    return "" if value is None else value


def axis_rows(rows: Sequence[AxisRow]) -> list[Row]:
    judged = any(row.coverage for row in rows)
    return [
        [
            (row.value + (" *" if row.small else ""), None),
            (str(row.n), row.n),
            (percent(row.score), _number(row.score)),
            (percent_ci(row.ci), _number(row.ci[0] if row.ci else None)),
            (percent(row.random), _number(row.random)),
            (percent(row.unparsed), row.unparsed),
            (percent(row.refused), row.refused),
            (percent(row.error), row.error),
            (row.images_shown, row.images),
            *([(row.coverage, None)] if judged else []),
        ]
        for row in rows
    ]


def axes_section(data: ReportData) -> str:
    headers: tuple[str, ...] = ("value", "n", "score", "95% CI", "random", "unparsed", "refused")
    headers += ("error", "images")
    if any(row.coverage for rows in data.axes.values() for row in rows):
        headers += ("verdicts/scope",)
    parts = [f"<h2>{esc('Breakdowns' + source_suffix(data.results))}</h2>"]
    for axis, rows in data.axes.items():
        parts.append(f"<h3>By {esc(axis)}</h3>" + table_html(headers, axis_rows(rows)))
    parts.append(
        f'<p class="note">* n &lt; {DEFAULT_MIN_N} or fewer than {MIN_IMAGES} images: wide CI, '
        "never ranked among the worst cells; a cell of one image speaks for that image's "
        "questions only. Click a column header to sort.</p>"
    )
    return "".join(parts)


def worst_section(data: ReportData) -> str:
    title = f"<h2>Worst cells (n ≥ {DEFAULT_MIN_N})</h2>"
    if not data.worst:
        return title + f'<p class="note">No cell of the cube has n ≥ {DEFAULT_MIN_N}.</p>'
    rows = [_cell_row(cell) for cell in data.worst]
    headers = ("cell", "n", "score", "simultaneous 95% CI", "random", "unparsed", "images",
               "below chance")  # fmt: skip
    note = (
        '<p class="note">below chance: one-sided test against chance, Holm-adjusted over '
        f"every rankable cell; {esc(worst_interval_note(data.worst))}.</p>"
    )
    return title + table_html(headers, rows) + note


def _cell_row(cell: Cell) -> Row:
    return [
        (cell.label, None),
        (str(cell.n), cell.n),
        (percent(cell.score), _number(cell.score)),
        (percent_ci(cell.ci), _number(cell.ci[0] if cell.ci else None)),
        (percent(cell.random), _number(cell.random)),
        (percent(cell.unparsed), cell.unparsed),
        (str(cell.images), cell.images),
        ("yes" if cell.below_chance else "no", None),
    ]


def deficiency_section(data: ReportData) -> str:
    rows = [[(name, None), (value, None)] for name, value in data.deficiency]
    return "<h2>Deficiency profile</h2>" + table_html(("measure", "value"), rows, False)


def sensitivity_section(data: ReportData) -> str:
    sensitivity = data.results.get("extraction_sensitivity")
    if not sensitivity:
        return ""  # nothing was read out of the answers (report generation), or nothing scored
    rows: list[Row] = [[
        ("overall", None),
        (percent(sensitivity["medlens"]), sensitivity["medlens"]),
        (percent(sensitivity["vlmeval"]), sensitivity["vlmeval"]),
        (f"{100 * sensitivity['difference']:+.1f} [{fmt_diff_ci(sensitivity.get('ci'), 100)}]",
         sensitivity["difference"]),
    ]]  # fmt: skip
    mode = data.results["spec"]["extract"]
    # per-slice medlens readings exist only when medlens extraction scored the run
    for row in data.axes.get("granularity", []) if mode == "medlens" else []:
        if row.score is not None and row.vlmeval is not None:
            gap = row.score - row.vlmeval
            rows.append(
                [
                    (row.value, None),
                    (percent(row.score), row.score),
                    (percent(row.vlmeval), row.vlmeval),
                    (f"{100 * gap:+.1f}", gap),
                ]
            )
    headers = (
        "slice",
        f"medlens extraction{' (this run)' if mode == 'medlens' else ''}",
        f"VLMEvalKit exact matching{' (this run)' if mode == 'vlmeval' else ''}",
        "difference (points)",
    )
    return "<h2>Extraction sensitivity</h2>" + table_html(headers, rows)


def limitations_section(data: ReportData) -> str:
    # the notes are markdown-flavoured: `code` spans become <code> after escaping
    items = "".join(
        "<li>" + re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(note)) + "</li>"
        for note in data.limitations
    )
    return f"<h2>Limitations</h2><ul>{items}</ul>"


# -- plots -------------------------------------------------------------------------------------
def plots_section(data: ReportData) -> str:
    images = [score_plot(axis, data.axes[axis]) for axis in PLOT_AXES if data.axes.get(axis)]
    if data.heatmap is not None and data.heatmap[0]:
        images.append(heatmap_plot(*data.heatmap))
    if not images:
        return ""
    tags = "".join(
        f'<img alt="{esc(alt)}" src="data:image/png;base64,{png}">' for alt, png in images
    )
    return f'<h2>Plots</h2><div class="plots">{tags}</div>'


def plot_text(text: str) -> str:
    """Data as literal matplotlib text: a '$' would otherwise start mathtext (and can fail)."""
    return text.replace("$", r"\$")


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def score_plot(axis: str, rows: Sequence[AxisRow]) -> tuple[str, str]:
    """Score per value with 95% CI bars; the random baseline of each value as a red tick."""
    return f"score by {axis}", _png(score_figure(axis, rows))


def score_figure(axis: str, rows: Sequence[AxisRow]) -> Any:
    """The figure of :func:`score_plot`; its legend stands right of the axes, never on a bar."""
    from matplotlib.figure import Figure

    shown = [r for r in rows if r.score is not None]
    figure = Figure(figsize=(7.0, 0.8 + 0.38 * max(1, len(shown))))
    ax = figure.add_subplot()
    positions = list(range(len(shown)))
    scores = [100 * (r.score or 0.0) for r in shown]
    low = [
        s - 100 * (r.ci[0] if r.ci else (r.score or 0.0))
        for s, r in zip(scores, shown, strict=True)
    ]
    high = [
        100 * (r.ci[1] if r.ci else (r.score or 0.0)) - s
        for s, r in zip(scores, shown, strict=True)
    ]
    ax.barh(positions, scores, xerr=[low, high], color="#5b8def", ecolor="#1d232b", capsize=3)
    randoms = [
        (p, 100 * r.random) for p, r in zip(positions, shown, strict=True) if r.random is not None
    ]
    if randoms:
        ax.scatter(
            [x for _, x in randoms],
            [p for p, _ in randoms],
            marker="|",
            s=300,
            color="#c0392b",
            label="random baseline",
            zorder=3,
        )
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, borderaxespad=0)
    ax.set_yticks(positions, [plot_text(f"{r.value} (n={r.n})") for r in shown], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("score % (95% CI)")
    ax.set_title(plot_text(f"score by {axis}"))
    return figure


def heatmap_plot(
    rows: list[str], columns: list[str], grid: dict[tuple[str, str], Cell]
) -> tuple[str, str]:
    """Department × granularity heat map of scores; each cell annotated with score and n."""
    import numpy as np
    from matplotlib.figure import Figure

    values = np.full((len(rows), len(columns)), np.nan)
    for (row, column), cell in grid.items():
        if cell.score is not None:
            values[rows.index(row), columns.index(column)] = 100 * cell.score
    figure = Figure(figsize=(1.6 + 1.3 * len(columns), 0.9 + 0.42 * len(rows)))
    ax = figure.add_subplot()
    image = ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    for (row, column), cell in grid.items():
        if cell.score is not None:
            label = f"{100 * cell.score:.0f}\nn={cell.n}" + ("*" if cell.small else "")
            # white on the dark ends of RdYlGn (< 20 % and > 85 %), black in between
            dark = cell.score < 0.2 or cell.score > 0.85
            ax.text(
                columns.index(column), rows.index(row), label, ha="center", va="center",
                fontsize=7, color="white" if dark else "black",
            )  # fmt: skip
    ax.set_xticks(range(len(columns)), [plot_text(c) for c in columns], fontsize=8)
    ax.set_yticks(range(len(rows)), [plot_text(r) for r in rows], fontsize=8)
    ax.set_title("score % by department × granularity (* n < 50)")
    figure.colorbar(image, ax=ax, fraction=0.04)
    return "department × granularity heat map", _png(figure)


# -- per-item browser --------------------------------------------------------------------------
def browser_section(run_dir: Path, data: ReportData) -> str:
    payload = items_payload(run_dir, list(data.axes)[:BROWSER_AXES])
    headers = ("id", "question", "options", "gold", "model output", "extraction", "score")
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    viewer = (
        f'<p class="note">Each id opens the item, with its images and every run side by side, in '
        f"<code>medlens view {esc(run_dir)}</code> (start it first; it serves {VIEWER_URL}).</p>"
    )
    return (
        f'<h2>Items</h2>{viewer}<div id="item-browser"><div id="browser-controls"></div>'
        '<p id="browser-count" class="note"></p>'
        f'<table id="item-table"><thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
        f'<script type="application/json" id="items-data">{safe_json(payload)}</script>'
    )


def items_payload(run_dir: Path, axes: Sequence[str] | None = None) -> dict[str, Any]:
    """Per item with a record: text fields, axes and outcome, for the browser script.

    `axes` get a filter each (default: the GMAI axes the items have).
    """
    from medlens.report.sections import PRIMARY_AXES
    from medlens.runs.view import RunView

    store = RunView(run_dir)
    records = store.records()
    items = [item for item in store.items() if item.id in records]
    if axes is None:
        axes = [a for a in PRIMARY_AXES if any(a in item.meta for item in items)]
    rows: list[dict[str, Any]] = []
    for item in items:
        record = records[item.id]
        extraction = record.get("extraction") or {}
        output = record.get("output")
        if record.get("error"):
            output = f"[error: {record['error'].get('type')}] {record['error'].get('message', '')}"
        if output and len(output) > MAX_OUTPUT_CHARS:
            output = output[:MAX_OUTPUT_CHARS] + " … (cut)"
        rows.append({
            "id": item.id,
            "question": item.question,
            "options": "\n".join(f"{k}. {v}" for k, v in item.options.items()),
            "gold": "" if item.answer is None else str(item.answer),
            "output": output,
            "extraction": _extraction_text(extraction),
            "score": record.get("score"),
            "outcome": outcome(record),
            "axes": {a: item.meta.get(a, "") for a in axes},
        })  # fmt: skip
    outcomes = sorted({str(row["outcome"]) for row in rows})
    return {"axes": axes, "outcomes": outcomes, "items": rows, "viewer": VIEWER_URL}


def _extraction_text(extraction: dict[str, Any]) -> str:
    """``C (ok)``; ``– (unparsed)`` when nothing was read (never Python's ``None``)."""
    if not extraction:
        return ""
    answer = extraction.get("answer")
    return f"{'–' if answer is None else answer} ({extraction.get('status')})"


def outcome(record: dict[str, Any]) -> str:
    """correct / wrong / partial / unparsed / refused / empty / error / no gold."""
    if record.get("error") is not None:
        return "error"
    status = (record.get("extraction") or {}).get("status", "ok")
    if status != "ok":
        return str(status)
    score = record.get("score")
    if score is None:
        return "no gold"
    return "correct" if score == 1 else ("wrong" if score == 0 else "partial")
