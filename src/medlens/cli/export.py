"""`medlens export`: a run as a GMAI TEST submission or a VLMEvalKit result set."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import SCORE_HELP, command, console, err_console


@command("export")
def export(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    format: Annotated[str, typer.Option("--format", "-f", help="gmai-submission or vlmeval")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="File (one-file exports) or directory; default RUN/export"
        ),
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
) -> None:
    """Export predictions: the GMAI-MMBench submission xlsx or VLMEvalKit result files."""
    from rich.text import Text

    from medlens.analysis.score_source import parse_score_source
    from medlens.report.export import export_run, incomplete_warning, write_export

    files = export_run(run, format, parse_score_source(score))
    written = write_export(files, output or run / "export")
    for path in written:
        console.print(Text(str(path)))
    warning = incomplete_warning(run)
    if warning:
        err_console.print(Text(warning), soft_wrap=True)
