"""`medlens report`: a finished (or partial) run as text, json, md, html or xlsx."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import SCORE_HELP, command

BINARY_FORMATS = ("xlsx",)


@command("report")
def report(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    format: Annotated[
        str, typer.Option("--format", "-f", help="text, json, md, html or xlsx")
    ] = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file")
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
) -> None:
    """Report a run: overall and per-axis scores with CIs, baselines and failure rates."""
    from medlens.analysis.score_source import parse_score_source
    from medlens.core.errors import MedlensError
    from medlens.report import render
    from medlens.runs.files import write_atomic

    if output is None and format in BINARY_FORMATS:  # before any work
        raise MedlensError(f"--format {format} is binary: give --output FILE")
    source = parse_score_source(score)
    rendered = render(run, format, source)
    if source.judged:  # every missing verdict is said, whatever the format
        from medlens.report import load_results

        warning = (load_results(run, source).get("score_coverage") or {}).get("warning")
        if warning:
            typer.echo(f"warning: {warning}", err=True)
    if output is None:
        if isinstance(rendered, bytes):
            raise MedlensError(f"--format {format} is binary: give --output FILE")
        sys.stdout.write(rendered)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(rendered, bytes):
            output.write_bytes(rendered)
        else:
            write_atomic(output, rendered)
    except OSError as exc:
        raise MedlensError(f"{output}: cannot write the report ({exc.strerror})") from None
