"""`medlens items estimate`: the full-benchmark score of a run on a designed subset, or of an adaptive
run, with its interval (and, with ``--baseline``, its difference from a previous full run)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from medlens.cli.common import command, console, write_json
from medlens.cli.items import items_app


@command("estimate", under=items_app)
def estimate(
    run: Annotated[Path, typer.Argument(help="Run directory: on a subset from `items sample`, or adaptive (`run --adaptive`)")],
    bank: Annotated[Path | None, typer.Option("--bank", help="BANK.json of the run's benchmark (an adaptive run's default: the bank it recorded)")] = None,
    by: Annotated[str | None, typer.Option("--by", help="Also estimate per value of this stratification axis")] = None,
    baseline: Annotated[Path | None, typer.Option("--baseline", metavar="RUN", help="A previous full run on the same items: adds baseline_score, delta and delta_ci")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:  # fmt: skip
    """Estimate the full-benchmark score (design-based 95% interval)."""
    from medlens.items.estimates import estimate_of

    found = estimate_of(run, bank, by, baseline)
    if as_json:
        write_json(found.to_json())
        return
    for line in estimate_lines(found, by):
        console.print(line, highlight=False, markup=False)


def estimate_lines(found: Any, by: str | None = None) -> list[str]:
    """The text report of an estimate (either kind)."""
    lo, hi = found.ci
    wlo, whi = found.wilson_ci
    lines = [
        f"estimated full-benchmark score: {found.estimate:.1%} [{lo:.1%}, {hi:.1%}] "
        f"(95%, {found.method_text()}) from {found.n} of {found.population_n} items",
        f"{'asked' if hasattr(found, 'status') else 'subset'} items' own score: "
        f"{found.subset_score:.1%} [{wlo:.1%}, {whi:.1%}] (Wilson, n={found.n})",
    ]
    if getattr(found, "status", None) is not None:
        lines.append(_status_line(found))
    elif found.ability is not None:
        lines.append(f"ability {found.ability:+.2f} ± {found.ability_se:.2f}")
    if found.extrapolating:
        lines.append("extrapolating: " + "; ".join(found.reasons) + ". The interval is "
                     "design-based and stays valid; the item model helps less, so it is wider.")  # fmt: skip
    for value, cell in (getattr(found, "by", None) or {}).items():
        clo, chi = cell["ci"]
        lines.append(f"  {by}={value}: {cell['estimate']:.1%} [{clo:.1%}, {chi:.1%}] "
                     f"from {cell['n']} of {cell['population_n']} items")  # fmt: skip
    comparison = getattr(found, "comparison", None) or {}
    if comparison:
        dlo, dhi = comparison["delta_ci"]
        lines.append(f"against {comparison['baseline']} ({comparison['baseline_score']:.1%}): "
                     f"Δ {comparison['delta']:+.1%} [{dlo:+.1%}, {dhi:+.1%}]")  # fmt: skip
    return lines


def _status_line(found: Any) -> str:
    """An adaptive run's state: why it stopped, or what is left to do."""
    if found.status == "target reached":
        line = f"stopped: half-width {found.half_width:.3f} ≤ target {found.target_halfwidth:g}"
    elif found.status == "running":
        line = "not finished: run it again to go on"
    else:
        line = f"stopped: {found.status} (half-width {found.half_width:.3f}, target {found.target_halfwidth:g})"
    if found.unanswered:
        line += f"; {found.unanswered} items of the last batch wait for an answer"
    return line


def print_adaptive(run: Path) -> None:
    """The last lines of ``run --adaptive``: the figures ``estimate RUN`` gives."""
    from medlens.core.errors import MedlensError
    from medlens.items.adaptive_estimate import estimate_adaptive_run

    try:
        lines = estimate_lines(estimate_adaptive_run(run))
    except MedlensError as exc:
        lines = [f"no estimate yet: {exc}"]
    for line in lines:
        console.print(line, highlight=False, markup=False)
