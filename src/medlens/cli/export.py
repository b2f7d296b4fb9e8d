"""`medlens export`: a run as a GMAI TEST submission or a VLMEvalKit result set; runs or a board
in the Every Eval Ever schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import SCORE_HELP, command, console, err_console

FORMAT_HELP = "gmai-submission, vlmeval (one run) or every-eval-ever (runs or a board)"


@command("export", short_help="Export predictions (GMAI-MMBench, VLMEvalKit) or EEE results.")
def export(
    runs: Annotated[
        list[Path], typer.Argument(help="Run directory; every-eval-ever: runs or a folder of runs")
    ],
    format: Annotated[str, typer.Option("--format", "-f", help=FORMAT_HELP)],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="File (one-file exports) or directory; default RUN/export"
        ),
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    organization: Annotated[
        str, typer.Option("--organization", help="every-eval-ever: who provides the results")
    ] = "unspecified",
    relationship: Annotated[
        str,
        typer.Option("--relationship", help="every-eval-ever: evaluator to model developer"),
    ] = "third_party",
    model_id: Annotated[
        str | None, typer.Option("--model-id", help="every-eval-ever: the model as org/name")
    ] = None,
    collection: Annotated[
        str | None, typer.Option("--collection", help="every-eval-ever: data/<collection>/ name")
    ] = None,
    by: Annotated[
        str, typer.Option("--by", help="every-eval-ever: axes whose values get results (a,b)")
    ] = "",
) -> None:
    """Export predictions (GMAI-MMBench submission xlsx, VLMEvalKit result files) or results in
    the Every Eval Ever schema, validated against its published version."""
    from rich.text import Text

    from medlens.analysis.score_source import parse_score_source
    from medlens.core.errors import SpecError
    from medlens.report.export import export_run, incomplete_warning, write_export

    source = parse_score_source(score)
    if format == "every-eval-ever":
        from medlens.report.eee import EeeSettings, expand_runs, export_eee

        settings = EeeSettings(score=source, organization=organization, relationship=relationship,
                               model_id=model_id, collection=collection,
                               by=tuple(a.strip() for a in by.split(",") if a.strip()))  # fmt: skip
        found = expand_runs(runs)
        if output is None and (len(runs) > 1 or len(found) > 1):
            raise SpecError("--output DIR: a board's export has no single run folder to go into")
        files = export_eee(found, settings)
        target = output or runs[0] / "export"
    else:
        if len(runs) > 1:
            raise SpecError(f"--format {format}: exports one run ({len(runs)} given)")
        found = runs
        files = export_run(runs[0], format, source)
        target = output or runs[0] / "export"
    for path in write_export(files, target):
        console.print(Text(str(path)))
    for run in found:
        warning = incomplete_warning(run)
        if warning:
            err_console.print(Text(f"{run.name}: {warning}" if len(found) > 1 else warning),
                              soft_wrap=True)  # fmt: skip
