"""`medlens calibrate`: does a run reproduce a published reference score?"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import SCORE_HELP, command, console, write_json

REFERENCE_HELP = (
    "gmai-val, gmai-test, medcmr, mmbu, or a FILE.csv (model, split, selection, scores)"
)


@command("calibrate", short_help="Does RUN reproduce MODEL's published score (95% CI)?")
def calibrate(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    reference: Annotated[str, typer.Option("--reference", help=REFERENCE_HELP)],
    model: Annotated[str, typer.Option("--as", help="Model name as the published table spells it")],
    split: Annotated[
        str | None, typer.Option("--split", help="Row of the table when a model has several")
    ] = None,
    column: Annotated[
        str | None, typer.Option("--column", help="Published column (default: the overall one)")
    ] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP)] = "rules",
    allow_partial: Annotated[
        bool,
        typer.Option("--allow-partial", help="Keep a run that is not like for like, labelled so"),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Say whether RUN reproduces the published score of MODEL within its 95% CI, and by how much."""
    from rich.text import Text

    from medlens.analysis.references import calibrate as calibrate_run
    from medlens.analysis.references import calibration_lines
    from medlens.analysis.score_source import parse_score_source

    result = calibrate_run(
        run, reference, model, split, column, parse_score_source(score), allow_partial
    )
    if as_json:
        write_json(result)
        return
    for line in calibration_lines(result):
        console.print(Text(line), soft_wrap=True)
