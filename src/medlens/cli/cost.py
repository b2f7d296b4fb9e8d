"""`medlens cost`: tokens and cost of a run, judges separately, projected to N items."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, console, write_json


@command("cost", short_help="Tokens and cost of RUN; the projected cost of N items.")
def cost(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    price: Annotated[str, typer.Option("--price", help="USD per 1M tokens: input=2.5,output=10")],
    scale_to: Annotated[
        int | None, typer.Option("--scale-to", help="Project the cost of N items (default: all)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Tokens and cost of RUN (model and judges), and the projected cost of N items with a CI."""
    from rich.text import Text

    from medlens.analysis.cost import cost_lines, parse_price, run_cost
    from medlens.core.errors import SpecError

    parsed = parse_price(price)
    if scale_to is not None and scale_to < 1:
        raise SpecError(f"--scale-to {scale_to}: expected a whole number of items, at least 1")
    result = run_cost(run, parsed, scale_to)
    if as_json:
        write_json(result)
        return
    for line in cost_lines(result):
        console.print(Text(line), soft_wrap=True)
