"""`medlens items gate`: exit 0 when a new checkpoint is shown no more than D below the last one, 1
when shown worse by more than D, 3 when the interval cannot tell (``items.gate``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, console, write_json
from medlens.cli.items import items_app


@command("gate", under=items_app)
def gate(
    run: Annotated[Path, typer.Argument(help="The new checkpoint's run: adaptive, on a designed subset, or full")],
    baseline: Annotated[Path, typer.Option("--baseline", metavar="RUN_OLD", help="The last checkpoint's full run on the same items")],
    max_drop: Annotated[float, typer.Option("--max-drop", metavar="D", help="The largest drop allowed, e.g. 0.02 (2 points)")],
    bank: Annotated[Path | None, typer.Option("--bank", help="BANK.json (default: the one the run's design recorded)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:  # fmt: skip
    """Pass (0), fail (1) or inconclusive (3): is RUN no more than D below RUN_OLD at 95%?"""
    from medlens.items.gate import gate as decide

    decision = decide(run, baseline, max_drop, bank)
    if as_json:
        write_json(decision.to_json())
    else:
        console.print(
            decision.message(run, baseline), highlight=False, markup=False, soft_wrap=True
        )
    raise typer.Exit(decision.exit_code)
