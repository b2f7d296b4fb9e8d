"""`medlens items fit|sample|audit`: the item bank, design-based samples and the item audit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from medlens.cli.common import app, console, err_console, with_error_policy, write_json, write_text
from medlens.cli.help_format import LiteralHelpCommand, LiteralHelpGroup

items_app = typer.Typer(
    help="Item science: an item bank from many runs, design-based samples, the item audit.",
    no_args_is_help=True,
    cls=LiteralHelpGroup,
)
app.add_typer(items_app, name="items")
F = TypeVar("F", bound=Callable[..., Any])


def subcommand(name: str) -> Callable[[F], F]:
    """An ``items`` subcommand with the CLI's error policy (one line, exit 2; Ctrl-C 130)."""

    def decorate(function: F) -> F:
        items_app.command(name, cls=LiteralHelpCommand)(with_error_policy(function))
        return function

    return decorate


@subcommand("fit")
def fit(
    runs: Annotated[list[Path], typer.Argument(help="At least 5 run directories on one benchmark")],
    output: Annotated[Path, typer.Option("--output", help="BANK.json to write")],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the bank's fit summary as JSON")
    ] = False,
) -> None:
    """Fit an item response model (2PL, chance as guessing floor) from many runs' answers."""
    from medlens.core.errors import SpecError
    from medlens.items.bank import fit_bank
    from medlens.runs.files import write_atomic

    if not output.parent.is_dir():
        raise SpecError(f"--output {output}: the folder {output.parent} does not exist")
    content = fit_bank(runs)
    write_atomic(output, json.dumps(content, ensure_ascii=False, indent=1) + "\n")
    summary = {"output": str(output), "benchmark": content["benchmark"], "fit": content["fit"],
               "runs": content["runs"], "n_items": len(content["items"])}  # fmt: skip
    if as_json:
        write_json(summary)
        return
    fitted = content["fit"]
    console.print(
        f"item bank of {content['benchmark']['spec']}: {len(content['items'])} items, "
        f"{len(content['runs'])} runs → {output}", highlight=False, markup=False,
    )  # fmt: skip
    console.print(
        f"fit: {fitted['method']}; converged {fitted['converged']} in {fitted['iterations']} "
        f"rounds; held-out log loss {fitted['held_out_log_loss']} (items' share right alone: "
        f"{fitted['held_out_baseline_log_loss']}; {fitted['held_out_cells']} cells)",
        highlight=False, markup=False,
    )  # fmt: skip
    for run, values in sorted(content["runs"].items(), key=lambda kv: -kv[1]["ability"]):
        console.print(f"  {run}: ability {values['ability']:+.2f} ± {values['se']:.2f}, "
                      f"score {values['score']:.1%} (n={values['n']})", highlight=False, markup=False)  # fmt: skip


@subcommand("sample")
def sample(
    spec: Annotated[str, typer.Argument(help="The bank's benchmark spec, e.g. gmai:GMAI_mm_bench_VAL.tsv")],
    bank: Annotated[Path, typer.Option("--bank", help="BANK.json from `medlens items fit`")],
    n: Annotated[int, typer.Option("--n", help="About how many items to draw")],
    output: Annotated[Path, typer.Option("--output", help="SUBSET.jsonl or SUBSET.tsv")],
    seed: Annotated[int, typer.Option("--seed", help="Seed of the draw")] = 0,
    stratify: Annotated[str | None, typer.Option("--stratify", help="AXIS[,AXIS]: strata besides predicted difficulty")] = None,
    unit: Annotated[str, typer.Option("--unit", help="item: draw single items (narrower interval); image: draw whole images with all their questions")] = "item",
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
) -> None:  # fmt: skip
    """Draw a design-based sample (inclusion probabilities recorded in subset.json)."""
    from medlens.core.specs import parse_spec
    from medlens.execution.selection import parse_stratify
    from medlens.items.sample import sample_subset

    content = sample_subset(
        parse_spec(spec), bank, n, output, seed, parse_stratify(stratify), force, unit
    )
    if content.get("note"):
        err_console.print(f"note: {content['note']}", highlight=False, markup=False)
    strata = content["design"]["strata"]
    err_console.print(
        f"wrote {content['n_items']} of {content['source']['n_items']} items to {output} "
        f"({len(strata)} strata, {sum(s['sampled_units'] for s in strata.values())} "
        f"{'items' if unit == 'item' else 'units (images)'} drawn; "
        f"design in {output.parent / 'subset.json'})",
        highlight=False, markup=False,
    )  # fmt: skip


@subcommand("audit")
def audit(
    runs: Annotated[list[Path], typer.Argument(help="At least 5 run directories on one benchmark")],
    bank: Annotated[Path | None, typer.Option("--bank", help="BANK.json (default: fit one on these runs)")] = None,
    probe_runs: Annotated[list[Path] | None, typer.Option("--probe-runs", help="`run --probe no-image` runs (repeat the option)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The audit as one JSON object (subset --drop-flagged reads it)")] = False,
    fmt: Annotated[str, typer.Option("--format", help="text|md|html")] = "text",
    top: Annotated[int, typer.Option("--top", help="How many items the text, md and html show")] = 30,
) -> None:  # fmt: skip
    """Find suspicious items: wrong keys, ambiguous, solved without image, saturated, at chance, misfit."""
    from medlens.core.errors import SpecError
    from medlens.items.audit import audit as run_audit

    if fmt not in ("text", "md", "html"):
        raise SpecError(f"--format {fmt}: expected text, md or html")
    content = run_audit(runs, bank, probe_runs or [])
    if as_json:
        write_json(content)
    elif fmt == "md":
        from medlens.report.items_audit import audit_markdown

        write_text(audit_markdown(content, top))
    elif fmt == "html":
        from medlens.report.items_audit import audit_html
        from medlens.runs.store import RunStore

        write_text(
            audit_html(content, RunStore.open(runs[0]).items(), [str(r) for r in runs], top)
        )
    else:
        _audit_text(content, top)


def _audit_text(content: dict[str, Any], top: int) -> None:
    from medlens.report.items_audit import summary_lines

    for line in summary_lines(content):
        console.print(line, highlight=False, markup=False)
    for row in content["items"][:top]:
        if not row["flags"]:
            break
        suggested = f", suggested {row['suggested_answer']}" if row["suggested_answer"] else ""
        console.print(f"  {row['id']}: suspicion {row['suspicion']:.2f} [{', '.join(row['flags'])}] "
                      f"key {row['key']}{suggested}", highlight=False, markup=False)  # fmt: skip
