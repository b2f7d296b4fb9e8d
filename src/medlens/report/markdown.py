"""`report --format md`: the full report as GitHub-flavoured markdown."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from medlens.analysis.medcmr_split import medcmr_lines
from medlens.analysis.score_source import ScoreSource
from medlens.analysis.slice_cells import worst_interval_note
from medlens.analysis.slices import Cell
from medlens.report.judges import markdown_section as judges_markdown
from medlens.report.md_format import md_text, table
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
from medlens.stats.cells import DEFAULT_MIN_N, MIN_IMAGES


def render(run_dir: Path, score: ScoreSource | None = None) -> str:
    """The markdown report of the run at `run_dir`."""
    data = build_report(Path(run_dir), score)
    from medlens.report.card import markdown_card, markdown_citations, protocol_card, with_run_rows

    card = with_run_rows(protocol_card(Path(run_dir)), data.protocol)
    parts = [f"# medlens report: {md_text(Path(run_dir).name)}", markdown_card(card)]
    if not data.has_answers:
        parts.append(no_answers_section(data))
    else:
        parts += [
            overall_section(data),
            axes_section(data),
            closed_open_section(data),
            judges_markdown(data.results),
            worst_section(data.worst),
            heatmap_section(data),
        ]
    parts += [deficiency_section(data), sensitivity_section(data), limitations_section(data)]
    parts.append(markdown_citations(card))
    return "\n\n".join(p for p in parts if p) + "\n"


def no_answers_section(data: ReportData) -> str:
    return (
        "## Scores\n\n"
        + md_text(data.results.get("no_answers_reason", "This split has no gold answers."))
        + f" {md_text(data.export_lead)}:\n\n"
        + f"```\n{data.export_hint}\n```"
    ) + "".join(f"\n\n{md_text(line)}" for line in single_multi_line(data.results))


def overall_section(data: ReportData) -> str:
    overall = data.results["overall"]
    ci = overall.get("ci")
    corrected = overall.get("chance_corrected")
    row = (
        str(overall["n"]),
        percent(overall["score"]),
        percent_ci(ci),
        percent(overall.get("random")),
        _above_random(overall["score"], overall.get("random"), ci),
        images_text(data.results, overall),
        "–" if corrected is None else f"{corrected:.3f}",
    )
    headers = ("n", "score", "95% CI", "random baseline", "vs random", "images", "chance-corrected")
    secondary = secondary_text(data.results)
    extra = f"\n\n{md_text(secondary)}" if secondary else ""
    extra += "".join(f"\n\n{md_text(line)}" for line in protocol_lines(data.results))
    extra += "".join(f"\n\n{md_text(line)}" for line in medcmr_lines(data.results))
    title = md_text("Overall" + source_suffix(data.results))
    return f"## {title}\n\n" + table(headers, [row], right_from=0) + extra


def closed_open_section(data: ReportData) -> str:
    rows = [tuple(md_text(cell) for cell in row) for row in closed_open_rows(data.results)]
    if not rows:
        return ""
    headers = ("slice", "closed score (n)", "open score (n)", "closed − open (points) [95% CI]")
    title = md_text("Closed vs open answers" + source_suffix(data.results))
    return f"## {title}\n\n" + table(headers, rows)


def _above_random(score: float | None, random: float | None, ci: Sequence[float] | None) -> str:
    if score is None or random is None:
        return "–"
    if ci and ci[0] > random:
        return f"{100 * (score - random):+.1f} points, above chance"
    if ci and ci[1] < random:
        return f"{100 * (score - random):+.1f} points, below chance"
    return f"{100 * (score - random):+.1f} points, not distinguishable from chance"


def axis_table(axis: str, rows: Sequence[AxisRow]) -> str:
    headers: tuple[str, ...] = ("value", "n", "score", "95% CI", "random", "unparsed", "refused")
    judged = any(row.coverage for row in rows)
    headers += ("error", "images", *(("verdicts/scope",) if judged else ()))
    body = [
        (
            md_text(row.value) + (" \\*" if row.small else ""),
            str(row.n),
            percent(row.score),
            percent_ci(row.ci),
            percent(row.random),
            percent(row.unparsed),
            percent(row.refused),
            percent(row.error),
            row.images_shown,
            *((row.coverage,) if judged else ()),
        )
        for row in rows
    ]
    return f"### By {md_text(axis)}\n\n" + table(headers, body)


def axes_section(data: ReportData) -> str:
    if not data.axes:
        return "## Breakdowns\n\nNo metadata axis takes more than one value on these items."
    tables = [axis_table(axis, rows) for axis, rows in data.axes.items()]
    note = (
        f"\\* n < {DEFAULT_MIN_N} or fewer than {MIN_IMAGES} images: wide CI, never ranked "
        "among the worst cells. A cell of one image speaks for that image's questions only."
    )
    title = md_text("Breakdowns" + source_suffix(data.results))
    return f"## {title}\n\n" + "\n\n".join(tables) + "\n\n" + note


def worst_section(worst: Sequence[Cell]) -> str:
    title = f"## Worst cells (n ≥ {DEFAULT_MIN_N})\n\n"
    if not worst:
        return title + f"No cell of the breakdown cube has n ≥ {DEFAULT_MIN_N}."
    headers = ("cell", "n", "score", "simultaneous 95% CI", "random", "unparsed", "images",
               "below chance")  # fmt: skip
    rows = [
        (md_text(cell.label), str(cell.n), percent(cell.score), percent_ci(cell.ci),
         percent(cell.random), percent(cell.unparsed), str(cell.images),
         "yes" if cell.below_chance else "no")
        for cell in worst
    ]  # fmt: skip
    note = (
        "\n\nbelow chance: one-sided test against chance, Holm-adjusted over every rankable cell; "
        f"{worst_interval_note(worst)}."
    )
    return title + table(headers, rows) + note


def heatmap_section(data: ReportData) -> str:
    if data.heatmap is None:
        return ""
    rows, columns, grid = data.heatmap
    body = []
    for row in rows:
        cells = []
        for column in columns:
            cell = grid.get((row, column))
            cells.append("" if cell is None else f"{percent(cell.score)} ({cell.n})")
        body.append((md_text(row), *cells))
    headers = ("department \\\\ granularity", *(md_text(c) for c in columns))
    return "## Department × granularity\n\nscore (n)\n\n" + table(headers, body)


def deficiency_section(data: ReportData) -> str:
    rows = [(md_text(name), md_text(value)) for name, value in data.deficiency]
    return "## Deficiency profile\n\n" + table(("measure", "value"), rows)


def sensitivity_section(data: ReportData) -> str:
    sensitivity = data.results.get("extraction_sensitivity")
    title = "## Extraction sensitivity\n\n"
    if not sensitivity:
        return ""  # nothing was read out of the answers (report generation), or nothing scored
    mode = data.results["spec"]["extract"]
    rows = [
        (
            "overall",
            percent(sensitivity["medlens"]),
            percent(sensitivity["vlmeval"]),
            f"{100 * sensitivity['difference']:+.1f} "
            f"[{md_text(fmt_diff_ci(sensitivity.get('ci'), 100))}]",
        )
    ]
    # per-slice medlens readings exist only when medlens extraction scored the run
    for row in data.axes.get("granularity", []) if mode == "medlens" else []:
        if row.score is not None and row.vlmeval is not None:
            rows.append(
                (
                    md_text(row.value),
                    percent(row.score),
                    percent(row.vlmeval),
                    f"{100 * (row.score - row.vlmeval):+.1f}",
                )
            )
    headers = (
        "slice",
        f"medlens extraction{' (this run)' if mode == 'medlens' else ''}",
        f"VLMEvalKit exact matching{' (this run)' if mode == 'vlmeval' else ''}",
        "difference (points)",
    )
    return title + table(headers, rows)


def limitations_section(data: ReportData) -> str:
    return "## Limitations\n\n" + "\n".join(f"- {note}" for note in data.limitations)
