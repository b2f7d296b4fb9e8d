"""`medlens agreement`: judge–human and inter-judge agreement."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from medlens.cli.common import command, console, write_json
from medlens.core.errors import MedlensError
from medlens.core.notation import split_list


@command("agreement", short_help="Agreement of a judge with people, or of judges.")
def agreement(
    runs: Annotated[list[Path], typer.Argument(help="Run directory (several: runs of one benchmark, for win ratios)")],
    judge: Annotated[list[str] | None, typer.Option("--judge", help="Judge name (repeat for inter-judge agreement)")] = None,
    judges: Annotated[str, typer.Option("--judges", help="Comma-separated judge names (inter-judge)")] = "",
    human: Annotated[list[Path] | None, typer.Option("--human", help="CSV/xlsx with id, rater and one column per dimension")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:  # fmt: skip
    """Agreement of a judge with people (ρ with bootstrap CI, κ, MAD, win ratios) or of judges."""
    names = [*(judge or []), *split_list(judges)]
    if human:
        if len(names) != 1:
            raise MedlensError("--human compares one judge with people: give exactly one --judge")
        from medlens.ratings.calibrated import save_calibrations
        from medlens.ratings.human import judge_human_agreement

        result = judge_human_agreement(runs, names[0], human)
        save_calibrations(runs, names[0], result, human)  # the label every judged table shows
        from medlens.analysis.artifacts import fresh_results

        for run in runs:  # results.json carries the label: rebuilt now, not by the next reader
            fresh_results(run, note=None)
    else:
        if len(runs) != 1:
            raise MedlensError("inter-judge agreement reads the judges of one run: give one RUN")
        from medlens.judges.verdicts import inter_judge_agreement

        result = inter_judge_agreement(runs[0], names)
    if as_json:
        write_json(result)
    elif human:
        _print_human(result)
    else:
        _print_judges(result)


def _fmt(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")


def _print_human(result: dict[str, Any]) -> None:
    from rich.table import Table

    weights = {d["kappa_weights"] for d in result["dimensions"].values()}
    kappa = "Cohen's κ" if weights == {None} else "quadratic-weighted κ"
    title = f"judge {result['judge']} vs people ({kappa}; 95% bootstrap CIs over items)"
    table = Table(title=title, title_justify="left")
    for header in ("dimension", "n", "items", "Spearman ρ", "κ", "MAD"):
        table.add_column(header, justify="left" if header == "dimension" else "right", no_wrap=True)
    for name, d in result["dimensions"].items():
        table.add_row(name, str(d["n"]), str(d["items"]), _fmt(d["spearman"], d["spearman_ci"]),
                      _fmt(d["kappa"], d["kappa_ci"]), _fmt(d["mad"], d["mad_ci"]))  # fmt: skip
    console.print(table)
    _print_calibrated(result)
    if result["raters"]:
        for name, d in result["raters"].items():
            console.print(f"inter-rater {name}: Krippendorff α = {_fmt(d['alpha'], d['alpha_ci'])} over "
                          f"{d['pairable_items']} items, {d['raters']} raters", highlight=False)  # fmt: skip
    wins = result["win_ratios"]
    if wins:
        console.print(f"win ratios over {wins['items']} items rated in every run "
                      f"({wins['comparisons']} comparisons per model):", highlight=False)  # fmt: skip
        for name, m in wins["models"].items():
            console.print(f"  {name}: people {_fmt(m['human'], m['human_ci'])}, judge "
                          f"{_fmt(m['judge'], m['judge_ci'])}, difference "
                          f"{_fmt(m['difference'], m['difference_ci'])}", highlight=False, soft_wrap=True)  # fmt: skip
        console.print(f"largest |people − judge| win-ratio difference: {_fmt(wins['largest_difference'])}",
                      highlight=False)  # fmt: skip
        for name, d in (wins.get("dimensions") or {}).items():
            console.print(f"  {name}: largest |people − judge| win-ratio difference "
                          f"{_fmt(d['largest_difference'])} over {d['items']} items", highlight=False)  # fmt: skip
        worst = wins.get("largest_dimension_difference")
        if worst:
            verdict = "within" if worst["within"] else "outside"
            console.print(f"largest per-dimension difference: {worst['dimension']} {_fmt(worst['value'])}, "
                          f"{verdict} Med-CMR's criterion ≤ {worst['criterion']}", highlight=False)  # fmt: skip


def _print_calibrated(result: dict[str, Any]) -> None:
    """The judged mean corrected with the human labels (PPI), beside the raw one."""
    from medlens.judges.calibration import agreement_label

    label, why = agreement_label(result["dimensions"])
    console.print(f"judge label: {label} ({why})", highlight=False, soft_wrap=True)
    for found in result["calibrated_runs"]:
        c = found["calibrated"]
        if c is None or c.get("score") is None:
            note = "labels cover none of its judged items" if c is None else c["method"]
            console.print(f"calibrated score of {found['run']}: n/a ({note})", highlight=False)
            continue
        human = c.get("human_only")
        alone = f"human labels alone {_fmt(human['score'], human['ci'])}; " if human else ""
        console.print(
            f"calibrated score of {found['run']}: {_fmt(c['score'], c['ci'])} from raw judged "
            f"{_fmt(c['raw'])} with {c['n_human']} human labels of {c['n_judged']} judged items; "
            f"{alone}{c['method']}",
            highlight=False, soft_wrap=True,
        )  # fmt: skip


def _print_judges(result: dict[str, Any]) -> None:
    console.print(f"judges: {', '.join(result['judges'])} (95% bootstrap CIs over items)",
                  highlight=False)  # fmt: skip
    for note in result.get("not_computed", []):
        console.print(note, highlight=False, soft_wrap=True)
    for name, d in result["dimensions"].items():
        console.print(f"{name}: Krippendorff α ({d['alpha_level']}) = {_fmt(d['alpha'], d['alpha_ci'])} over "
                      f"{d['pairable_items']} items", highlight=False)  # fmt: skip
        for pair in d["pairs"]:
            rho = pair["spearman"]
            rho_text = "" if rho is None else f", Spearman ρ {_fmt(rho, pair['spearman_ci'])}"
            console.print(f"  {pair['raters'][0]} vs {pair['raters'][1]} (n={pair['n']}): "
                          f"κ {_fmt(pair['kappa'], pair['kappa_ci'])}{rho_text}", highlight=False)  # fmt: skip
