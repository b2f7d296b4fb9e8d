"""`medlens estimate`: the full-benchmark score of a run on a designed subset, with its interval."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, console, write_json


@command("estimate")
def estimate(
    run: Annotated[Path, typer.Argument(help="Run directory, made on a subset from `items sample`")],
    bank: Annotated[Path, typer.Option("--bank", help="BANK.json of the subset's benchmark")],
    by: Annotated[str | None, typer.Option("--by", help="Also estimate per value of this stratification axis")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:  # fmt: skip
    """Estimate the full-benchmark score (AIPW, design-based 95% interval)."""
    from medlens.items.estimate import estimate_run

    found = estimate_run(run, bank, by)
    if as_json:
        write_json(found.to_json())
        return
    lo, hi = found.ci
    wlo, whi = found.wilson_ci
    lines = [
        f"estimated full-benchmark score: {found.estimate:.1%} [{lo:.1%}, {hi:.1%}] "
        f"(95%, {found.method_text()}) from {found.n} of {found.population_n} items",
        f"subset score: {found.subset_score:.1%} [{wlo:.1%}, {whi:.1%}] (Wilson, n={found.n})",
        f"ability {found.ability:+.2f} ± {found.ability_se:.2f}",
    ]
    if found.extrapolating:
        lines.append("extrapolating: " + "; ".join(found.reasons) + ". The interval is "
                     "design-based and stays valid; the item model helps less, so it is wider.")  # fmt: skip
    for value, cell in found.by.items():
        clo, chi = cell["ci"]
        lines.append(f"  {by}={value}: {cell['estimate']:.1%} [{clo:.1%}, {chi:.1%}] "
                     f"from {cell['n']} of {cell['population_n']} items")  # fmt: skip
    for line in lines:
        console.print(line, highlight=False, markup=False)
