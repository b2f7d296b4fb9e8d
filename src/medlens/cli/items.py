"""`medlens items fit|sample|audit` (`estimate` and `gate` in their modules): the item bank, design-based samples and the item audit."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from medlens.cli.common import (
    app,
    console,
    err_console,
    refuse_page_on_terminal,
    with_error_policy,
    write_json,
    write_json_text,
    write_output,
    write_text,
)
from medlens.cli.help_format import LiteralHelpCommand, LiteralHelpGroup

items_app = typer.Typer(
    help="Item science: an item bank from many runs, design-based samples, the score estimated "
    "from a sample or an adaptive run, a checkpoint gate, the item audit.",
    short_help="Item science: item bank, designed samples, estimate, gate.",
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
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
) -> None:
    """Fit an item response model (2PL, chance as guessing floor) from many runs' answers."""
    import numpy as np

    from medlens.core.errors import SpecError
    from medlens.items.bank import fit_bank
    from medlens.runs.files import write_atomic
    from medlens.stats.intervals import wilson

    if not output.parent.is_dir():
        raise SpecError(f"--output {output}: the folder {output.parent} does not exist")
    if output.is_dir():
        raise SpecError(f"--output {output}: is a folder; give a file name (BANK.json)")
    if output.exists() and not force:
        raise SpecError(f"--output {output}: exists; give --force to replace it")
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
    answered = sum(1 for item in content["items"].values() if item["n_runs"])
    if answered < len(content["items"]):
        console.print(
            f"{answered} of the {len(content['items'])} items were answered by some run; the "
            "others keep the prior (difficulty 0, discrimination 1)", highlight=False, markup=False,
        )  # fmt: skip
    for run, values in sorted(content["runs"].items(), key=lambda kv: -kv[1]["ability"]):
        lo, hi = wilson(np.array([values["score"] * values["n"]]), np.array([values["n"]]))
        console.print(f"  {run}: ability {values['ability']:+.2f} ± {values['se']:.2f}, "
                      f"score {values['score']:.1%} [{lo[0]:.1%}, {hi[0]:.1%}] (n={values['n']}, "
                      "Wilson)", highlight=False, markup=False)  # fmt: skip


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
        f"({len(strata)} {'stratum' if len(strata) == 1 else 'strata'}, "
        f"{sum(s['sampled_units'] for s in strata.values())} "
        f"{'items' if unit == 'item' else 'units (images)'} drawn; "
        f"design in {output.parent / 'subset.json'})",
        highlight=False, markup=False,
    )  # fmt: skip


@subcommand("audit")
def audit(
    runs: Annotated[list[Path], typer.Argument(help="At least 5 run directories on one benchmark")],
    bank: Annotated[Path | None, typer.Option("--bank", help="BANK.json (default: fit one on these runs)")] = None,
    probe_runs: Annotated[list[Path] | None, typer.Option("--probe-runs", help="`run --probe no-image` runs (repeat the option)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="The audit as one JSON object (subset --drop-flagged reads it; the same as --format json)")] = False,
    fmt: Annotated[str, typer.Option("--format", "-f", help="text, json, md or html")] = "text",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write to this file")] = None,
    top: Annotated[int, typer.Option("--top", help="How many items the text, md and html show")] = 30,
    q: Annotated[float, typer.Option("--q", help="Flag at this false-discovery rate (Benjamini–Hochberg q), in (0, 1)")] = 0.1,
) -> None:  # fmt: skip
    """Find suspicious items: wrong keys, ambiguous, solved without image, saturated, at chance, misfit."""
    from medlens.core.errors import SpecError
    from medlens.items.audit import audit as run_audit

    if fmt not in AUDIT_FORMATS:
        raise SpecError(f"--format {fmt}: expected {', '.join(AUDIT_FORMATS)}")
    if top < 1:
        raise SpecError(f"--top {top}: expected at least 1")
    if not 0 < q < 1:
        raise SpecError(f"--q {q:g}: expected a false-discovery rate between 0 and 1")
    fmt = "json" if as_json else fmt
    refuse_page_on_terminal(fmt, output)
    content = run_audit(runs, bank, probe_runs or [], q)
    if fmt == "text" and output is None:
        for line in _audit_lines(content, top):
            console.print(line, highlight=False, markup=False)
        return
    rendered = _audit_page(content, fmt, runs, top)
    if output is not None:
        write_output(output, rendered)
    elif fmt == "json":
        write_json_text(rendered)
    else:
        write_text(rendered)


AUDIT_FORMATS = ("text", "json", "md", "html")


def _audit_page(content: dict[str, Any], fmt: str, runs: list[Path], top: int) -> str:
    """The audit as one text in `fmt` (json, md, html, or the text lines)."""
    if fmt == "json":
        return json.dumps(content, ensure_ascii=False) + "\n"
    if fmt == "md":
        from medlens.report.items_audit import audit_markdown

        return audit_markdown(content, top)
    if fmt == "html":
        from medlens.report.items_audit import audit_html
        from medlens.runs.view import RunView

        return audit_html(content, RunView(runs[0]).items(), [str(r) for r in runs], top)
    return "".join(line + "\n" for line in _audit_lines(content, top))


def _audit_lines(content: dict[str, Any], top: int) -> list[str]:
    from medlens.report.items_audit import flags_text, summary_lines

    lines = list(summary_lines(content))
    for row in content["items"][:top]:
        if not row["flags"]:
            break
        suggested = f", suggested {row['suggested_answer']}" if row["suggested_answer"] else ""
        lines.append(f"  {row['id']}: suspicion {row['suspicion']:.2f} [{flags_text(row)}] "
                     f"key {row['key']}{suggested}")  # fmt: skip
    return lines
