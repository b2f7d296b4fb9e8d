"""`medlens report`: a finished (or partial) run as text, json, md, html or xlsx."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import (
    SCORE_HELP,
    command,
    refuse_page_on_terminal,
    write_output,
    write_text,
)

BINARY_FORMATS = ("xlsx",)


@command("report", short_help="Report a run: scores per axis with CIs and baselines.")
def report(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    format: Annotated[
        str, typer.Option("--format", "-f", help="text, json, md, html or xlsx")
    ] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file")
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON object (the same as --format json)")
    ] = False,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Add a levels section: these axes nested parent → child, each row with n and "
            "CI; tree:LEVEL adds its parent levels (tree:l2-category = category,l2-category)",
        ),
    ] = None,
) -> None:
    """Report a run: overall and per-axis scores with CIs, baselines and failure rates."""
    from medlens.analysis.score_source import parse_score_source
    from medlens.core.errors import MedlensError, SpecError
    from medlens.report import render

    if as_json:  # --json, as every other command spells it
        if format not in ("text", "json"):
            raise SpecError(f"--json and --format {format} ask for two formats: give one")
        format = "json"
    if output is None and format in BINARY_FORMATS:  # before any work
        raise MedlensError(f"--format {format} is binary: give --output FILE")
    refuse_page_on_terminal(format, output)
    if format == "html":  # before results are rebuilt or anything is written
        from medlens.core.extras import require_feature

        require_feature("--format html (its plots)", "plots")
    if by is not None:
        from medlens.report.levels import check_levels_format

        check_levels_format(format)
    source = parse_score_source(score)
    rendered = render(run, format, source)
    if by is not None and isinstance(rendered, str):
        from medlens.report.levels import with_levels

        rendered = with_levels(rendered, format, run, source, by)
    if source.judged:  # every missing verdict is said, whatever the format
        from medlens.report import load_results

        warning = (load_results(run, source).get("score_coverage") or {}).get("warning")
        if warning:
            typer.echo(f"warning: {warning}", err=True)
    if output is None:
        if isinstance(rendered, bytes):
            raise MedlensError(f"--format {format} is binary: give --output FILE")
        write_text(rendered)
        return
    write_output(output, rendered)
