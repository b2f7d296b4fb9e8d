"""`medlens subgroups`: per-group accuracy and AUROC, the largest gap, screening points."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, console, write_json


@command("subgroups", short_help="Accuracy and AUROC per group; the largest gap with its CI.")
def subgroups(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    by: Annotated[str, typer.Option("--by", help="The axis whose values are the groups")],
    at_specificity: Annotated[
        float, typer.Option(help="Binary tasks: sensitivity at this specificity or above")
    ] = 0.9,
    at_sensitivity: Annotated[
        float, typer.Option(help="Binary tasks: specificity at this sensitivity or above")
    ] = 0.9,
    positive: Annotated[
        str | None, typer.Option(help="Binary tasks: the positive label (default: yes)")
    ] = None,
    min_n: Annotated[int, typer.Option(help="Groups smaller than this stay out of the gap")] = 50,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Accuracy and AUROC of each group of RUN by an axis with CIs, the largest gap between
    groups with its interval, and sensitivity at a fixed specificity (and the reverse) for
    binary screening tasks."""
    from medlens.analysis.subgroups import subgroup_lines, subgroup_result

    result = subgroup_result(
        run, by, specificity=at_specificity, sensitivity=at_sensitivity, positive=positive,
        min_n=min_n,
    )  # fmt: skip
    if as_json:
        write_json(result)
        return
    for line in subgroup_lines(result):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
