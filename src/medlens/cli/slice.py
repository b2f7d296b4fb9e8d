"""`medlens slice`: scores over any metadata axes (cross tables, the cube, the worst cells)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import SCORE_HELP, command, console, print_warnings, write_json
from medlens.core.notation import split_list

if TYPE_CHECKING:
    from rich.table import Table

    from medlens.analysis.score_source import ScoreSource
    from medlens.analysis.slices import Cell

NO_ANSWERS = (
    "no scored items: this split has no gold answers, so scores need the official answer key; "
    "{lead}: `{hint}`"
)
NO_MATCH = "no items with a record match the filter"
ALL_ERRORED = "no scored items: every matching item errored (see `medlens report`)"


@command(
    "slice",
    short_help="Score, 95% CI and random baseline per cell of any axes.",
    help="Slice a run: n, score, 95% CI, random baseline and unparsed rate per cell.",
)
def slice_run(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    by: Annotated[
        str,
        typer.Option(
            "--by",
            help="Axes to group by, comma-separated (at most 4); tree:LEVEL "
            "adds its parent levels (tree:l2-category = category,l2-category)",
        ),
    ],
    where: Annotated[
        str, typer.Option("--where", help="Filter: a=v, a!=v, a in (v|w); ',' = AND")
    ] = "",
    min_n: Annotated[int, typer.Option("--min-n", help="Cells with fewer items are marked")] = 50,
    worst: Annotated[
        int, typer.Option("--worst", help="List the K worst cells with n ≥ min-n")
    ] = 0,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Slice a run: n, score, 95% CI, random baseline and unparsed rate per cell.

    Over 60 lines only because typer declares each option in the signature.
    """
    from medlens.analysis.score_source import coverage_warnings, parse_score_source
    from medlens.analysis.slices import apply_where, cube, load_slice_table, worst_cells
    from medlens.core.where import parse_where

    if min_n < 1 or worst < 0:
        from medlens.core.errors import SpecError

        raise SpecError(f"--min-n {min_n} / --worst {worst}: expected --min-n ≥ 1, --worst ≥ 0")
    source = parse_score_source(score)
    table = load_slice_table(run, source)
    has_answers = table.has_answers
    from medlens.checks.vocabulary import expand_levels

    axes = expand_levels(split_list(by), table.axes)
    conditions = parse_where(where, table.axes)
    cells = cube(apply_where(table, conditions), axes, min_n=min_n)
    ranked = worst_cells(cells, worst, min_n) if worst else []
    from medlens.analysis.levels import asks_for_levels, level_rows

    levels = level_rows(cells, axes) if asks_for_levels(by) else []
    warnings = coverage_warnings(run, source, cells[0].coverage)
    print_warnings(warnings)
    if as_json:
        payload = {
            "run": str(run),
            "score_source": source.label,
            "by": axes,
            "where": where,
            "min_n": min_n,
            "cells": [c.to_json() for c in cells],
            "worst": [c.to_json() for c in ranked],
            "score_warnings": warnings,
            **({"levels": [row.to_json() for row in levels]} if levels else {}),
        }
        write_json(payload)
        return
    from medlens.analysis.artifacts import imageless

    _print_text(cells, axes, ranked, min_n, where, None if has_answers else run, worst, source,
                imageless(run))  # fmt: skip
    if levels and cells[0].n:
        from rich.text import Text

        from medlens.report.levels import levels_text

        console.print(Text(levels_text(axes, levels, min_n)), soft_wrap=True)


def _print_text(
    cells: Sequence[Cell],
    axes: list[str],
    ranked: list[Cell],
    min_n: int,
    where: str,
    answers_missing_in: Path | None,
    worst: int = 0,
    source: ScoreSource | None = None,
    no_images: bool = False,
) -> None:
    """Tables for a terminal; `answers_missing_in` is the run when its split has no answers;
    `no_images`: the run's items carry none (the images column shows "–").

    Over 60 lines: one branch per part of the printout (heading, tables, notes)."""
    from rich.text import Text

    from medlens.analysis.score_source import RULES
    from medlens.analysis.slice_cells import worst_interval_note
    from medlens.analysis.slices import cells_at
    from medlens.stats.cells import MIN_IMAGES, ONE_IMAGE

    source = source or RULES
    overall = cells[0]
    heading = f"{overall.n} scored items" + (f" where {where}" if where else "")
    if source.judged:
        heading += f"; {source.title()}" + (f", {_coverage(overall)}" if overall.coverage else "")
    console.print(Text(heading), soft_wrap=True)
    if overall.n == 0:
        if answers_missing_in is not None:
            message = _no_answers(answers_missing_in)
        else:
            message = NO_MATCH if overall.records == 0 else ALL_ERRORED
        console.print(Text(message), soft_wrap=True)
        return
    suffix = f" ({source.title()})" if source.judged else ""
    if len(axes) == 2:
        console.print(cross_table_view(cells, axes[0], axes[1], min_n, suffix))
    for axis in axes if len(axes) > 1 else []:
        title = f"by {axis}{suffix}"
        console.print(cell_table(cells_at(cells, [axis]), title, min_n, no_images=no_images))
    title = " × ".join(axes) + suffix
    console.print(cell_table(cells_at(cells, axes), title, min_n, no_images=no_images))
    if ranked:
        title = f"worst {len(ranked)} cells (n ≥ {min_n}){suffix}"
        console.print(cell_table(ranked, title, min_n, named=True, no_images=no_images))
    elif worst:
        console.print(Text(f"worst cells: none has n ≥ {min_n} (see --min-n)"), soft_wrap=True)
    if any(c.small for c in cells):
        console.print(
            Text(f"* n < {min_n} or images < {MIN_IMAGES}: too few to rank; read with care"),
            soft_wrap=True,
        )
    if not no_images and any(c.images == 1 for c in cells):
        console.print(Text(f"images = 1: {ONE_IMAGE}"), soft_wrap=True)
    if ranked:
        console.print(
            Text("below chance: Holm-adjusted one-sided test over every rankable cell; "
                 + worst_interval_note(ranked)),
            soft_wrap=True,
        )  # fmt: skip


def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def cell_table(
    cells: Sequence[Cell], title: str, min_n: int, named: bool = False, no_images: bool = False
) -> Table:
    """One row per cell: value(s), n, score, CI, random baseline, unparsed and error rates.

    `named` labels cells ``axis=value`` (for lists mixing axes, like the worst cells);
    `no_images`: the run has none, so the images column shows "–" where each item is its own
    cluster (items that share a case id keep their cluster count).
    """
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left")
    names: tuple[str, ...] = ("cell", "n", "images", "score %", "95% CI", "random %")
    names += ("unparsed %", "error %")
    judged = any(c.coverage is not None for c in cells)
    names += ("verdicts / scope",) if judged else ()
    for name in names + (("below chance",) if named else ()):
        if name == "cell":
            table.add_column(name, overflow="fold", ratio=1, min_width=8)
        else:
            table.add_column(name, justify="right", no_wrap=True)
    for cell in cells:
        label = cell.label if named else ", ".join(value for _, value in cell.key) or "overall"
        ci = f"{percent(cell.ci[0])}–{percent(cell.ci[1])}" if cell.ci else "–"
        below = () if not named else ("yes" if cell.below_chance else "no",)
        table.add_row(
            Text(label + (" *" if cell.small else "")),
            str(cell.n),
            "–" if no_images and cell.images == cell.n else str(cell.images),
            percent(cell.score),
            ci,
            percent(cell.random),
            percent(cell.unparsed),
            percent(cell.error),
            *((_coverage(cell).removeprefix("coverage "),) if judged else ()),
            *below,
        )
    return table


def _coverage(cell: Cell) -> str:
    from medlens.analysis.score_source import coverage_text

    if cell.coverage is None:
        return ""
    return coverage_text(dict(zip(("verdicts", "scope"), cell.coverage, strict=True)))


def cross_table_view(
    cells: Sequence[Cell], row_axis: str, column_axis: str, min_n: int, suffix: str = ""
) -> Table:
    """Score (n) for each row value × column value; small cells marked with *."""
    from rich.table import Table
    from rich.text import Text

    from medlens.analysis.slices import cross_table

    rows, columns, grid = cross_table(cells, row_axis, column_axis)
    title = f"{row_axis} × {column_axis}: score % (n){suffix}"
    table = Table(title=Text(title), title_justify="left")
    table.add_column(Text(row_axis))
    for column in columns:
        table.add_column(Text(column), justify="right")
    for row in rows:
        entries = []
        for column in columns:
            cell = grid.get((row, column))
            if cell is None:
                entries.append("")
            else:
                entries.append(f"{percent(cell.score)} ({cell.n}){' *' if cell.small else ''}")
        table.add_row(Text(row), *entries)
    return table


def _no_answers(run: Path) -> str:
    from medlens.report.sections import answers_hint

    lead, hint = answers_hint(run)
    return NO_ANSWERS.format(lead=lead[0].lower() + lead[1:], hint=hint)
