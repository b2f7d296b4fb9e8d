"""`medlens ratings export|import|pairwise|errors`: human rating studies on a run."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from medlens.cli.common import SCORE_HELP, app, console, err_console, with_error_policy, write_json
from medlens.cli.help_format import LiteralHelpCommand, LiteralHelpGroup

if TYPE_CHECKING:
    from rich.table import Table

ratings_app = typer.Typer(
    help="Human rating studies: blinded sheets out, filled sheets in, with CIs and agreement.",
    short_help="Human rating studies: blinded sheets out, ratings in, with CIs.",
    no_args_is_help=True,
    cls=LiteralHelpGroup,
)
app.add_typer(ratings_app, name="ratings")
F = TypeVar("F", bound=Callable[..., Any])

Sample = Annotated[int, typer.Option("--sample", help="How many items to put in the sheet")]
Seed = Annotated[int, typer.Option("--seed", help="Seed of the sample and its order")]
Output = Annotated[Path, typer.Option("--output", "-o", help="sheet.xlsx or sheet.csv")]


def subcommand(name: str) -> Callable[[F], F]:
    """A ``ratings`` subcommand with the CLI's error policy (one line, exit 2; Ctrl-C 130)."""

    def decorate(function: F) -> F:
        ratings_app.command(name, cls=LiteralHelpCommand)(with_error_policy(function))
        return function

    return decorate


@subcommand("export")
def export(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    sample: Sample,
    output: Output,
    seed: Seed = 0,
    judge: Annotated[str | None, typer.Option("--judge", help="Rate only items this judge judged")] = None,
    protocol: Annotated[str | None, typer.Option("--protocol", help="equivalence|rubric|medcmr|multimedqa|answer|file:PATH (default: the judge's, else equivalence); answer: experts answer the questions")] = None,
) -> None:  # fmt: skip
    """Write a blinded rating sheet (model hidden, items shuffled) plus its instructions;
    with --protocol answer, an answer sheet for experts (the human upper bound)."""
    if protocol == "answer":
        from medlens.ratings.answers import export_answer_sheet

        if judge is not None:
            from medlens.core.errors import SpecError

            raise SpecError("--protocol answer asks people the questions: it takes no --judge")
        study, written = export_answer_sheet(run, output, sample, seed)
        _wrote(study.id, len(study.items), "answer", written, sample)
        return
    from medlens.ratings.export import export_ratings

    study, written = export_ratings(run, output, sample, seed, protocol, judge)
    _wrote(study.id, len(study.items), study.protocol.name, written, sample)


@subcommand("pairwise")
def pairwise(
    run_a: Annotated[Path, typer.Argument(help="First run (the key is stored here)")],
    run_b: Annotated[Path, typer.Argument(help="Second run, same benchmark")],
    sample: Sample,
    output: Output,
    seed: Seed = 0,
) -> None:
    """Write a blinded side-by-side sheet: 'Response 1/2' in a seeded random order per item."""
    from medlens.ratings.pairwise import export_pairwise

    study, written = export_pairwise(run_a, run_b, output, sample, seed)
    _wrote(study.id, len(study.items), "pairwise", written, sample)


@subcommand("errors")
def errors(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    sample: Sample,
    output: Output,
    seed: Seed = 0,
    categories: Annotated[str, typer.Option("--categories", help="Comma-separated error categories")] = "recognition,reasoning,knowledge,misunderstanding,format",
    stratify: Annotated[str | None, typer.Option("--stratify", help="Stratify the sample over this axis")] = None,
    score: Annotated[str, typer.Option("--score", help=SCORE_HELP + " (which answers are wrong)")] = "rules",
) -> None:  # fmt: skip
    """Write a sheet of wrong answers to attribute to error categories (Med-CMR's analysis)."""
    from medlens.analysis.score_source import parse_score_source, sourced_run
    from medlens.ratings.attribution import export_errors, parse_categories
    from medlens.runs.view import RunView

    source, scores = parse_score_source(score), None
    if source.judged:  # wrong by the score the tables show, not by the rules
        store = RunView(run)
        sourced = sourced_run(store.path, store.items(), store.records(), source)
        scores = {i: r.get("score") for i, r in sourced.records.items()}
    study, written = export_errors(
        run, output, sample, seed, parse_categories(categories), stratify, scores, source.label
    )
    _wrote(study.id, len(study.items), "errors", written, sample)


def _wrote(study: str, n: int, what: str, written: Sequence[Path], asked: int) -> None:
    files = ", ".join(str(p) for p in written)
    console.print(f"study {study}: {n} items ({what}) → {files}", highlight=False, soft_wrap=True)
    if n < asked:
        err_console.print(
            f"note: --sample {asked} asked for more items than the {n} that can be rated",
            highlight=False,
        )


@subcommand("import")
def import_(
    run: Annotated[Path, typer.Argument(help="Run directory the sheet was exported from (RUN_A for side-by-side)")],
    file: Annotated[Path, typer.Argument(help="Filled sheet (.xlsx or .csv)")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:  # fmt: skip
    """Store a filled sheet's ratings in the run and report them with CIs and agreement; an
    answer sheet becomes a run of its own, model "human", that boards and compares."""
    from medlens.ratings.answers import answer_study
    from medlens.ratings.importing import import_sheet
    from medlens.ratings.summary import summarise

    study = answer_study(run, file)
    if study is not None:
        _import_answers(run, file, study, as_json)
        return

    result = import_sheet(run, file)
    summary = summarise(run, result.study)
    summary["import"] = {"rows": result.rows, "added": result.added, "path": str(result.path)}
    if as_json:
        write_json(summary)
        return
    console.print(
        f"{file}: {result.rows} rated rows, {result.added} new → {result.path}",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    print_summary(summary)


def _import_answers(run: Path, file: Path, study: Any, as_json: bool) -> None:
    """The human run: records stored, then results derived as for any run."""
    from medlens.analysis.artifacts import results_after_writing
    from medlens.ratings.answers import import_answers

    store, answered, added = import_answers(run, file, study)
    results = results_after_writing(store.view())
    overall = results["overall"]
    data = {"run": str(store.path), "model": "human", "answered": answered, "added": added,
            "overall": overall}  # fmt: skip
    if as_json:
        write_json(data)
        return
    score = "–" if overall["score"] is None else f"{overall['score']:.3f}"
    ci = overall.get("ci") or None
    console.print(
        f"{file}: {answered} answered rows, {added} new → run {store.path} (model human): "
        f"score {score}{f' [{ci[0]:.3f}, {ci[1]:.3f}]' if ci else ''} (n={overall['n']})",
        highlight=False, soft_wrap=True,
    )  # fmt: skip


def print_summary(summary: dict[str, Any]) -> None:
    if summary["kind"] == "pairwise":
        _print_cells("preference (A = " + summary["run_a"] + ", B = " + summary["run_b"] + ")",
                     summary["preference"], summary["by"], summary["by_rater"])  # fmt: skip
        _print_agreement("preference", summary["agreement"])
        return
    console.print(f"raters: {', '.join(summary['raters']) or 'none'}", highlight=False)
    for axis, cell in summary["axes"].items():
        if not cell["n"]:
            console.print(f"{axis}: not rated yet", highlight=False)
            continue
        _print_cells(axis, cell, cell["by"], {})
        _print_agreement(axis, cell["agreement"])


def _print_cells(
    title: str, overall: dict[str, Any], by: dict[str, Any], raters: dict[str, Any]
) -> None:
    rows = [("all", overall)]
    rows += [
        (f"{axis}={value}", cell) for axis, cells in by.items() for value, cell in cells.items()
    ]
    rows += [(f"rater {rater}", cell) for rater, cell in raters.items()]
    console.print(category_table(title, rows))


def category_table(title: str, rows: Sequence[tuple[str, dict[str, Any]]]) -> Table:
    from rich.table import Table
    from rich.text import Text

    categories = list(rows[0][1]["categories"]) if rows else []
    extra = ["A ≥ B", "B ≥ A"] if rows and "equal_or_better" in rows[0][1] else []
    table = Table(title=Text(f"{title} (share, Wilson 95% CI)"), title_justify="left")
    table.add_column("slice", overflow="fold")
    table.add_column("n", justify="right")
    for header in [*categories, *extra]:
        table.add_column(header, justify="right")
    for label, cell in rows:
        shares = [cell["categories"][c] for c in categories]
        if extra:
            shares += [cell["equal_or_better"]["A"], cell["equal_or_better"]["B"]]
        table.add_row(Text(label), str(cell["n"]), *(_share(s) for s in shares))
    return table


def _share(cell: dict[str, Any]) -> str:
    if not cell["n"]:
        return "-"
    low, high = cell["ci"]
    return f"{cell['k']} · {100 * cell['share']:.1f}% [{100 * low:.1f}–{100 * high:.1f}]"


def _print_agreement(axis: str, agreement: dict[str, Any] | None) -> None:
    if not agreement:
        return
    console.print(
        f"{axis}: inter-rater Krippendorff α ({agreement['alpha_level']}) = "
        f"{_estimate(agreement['alpha'], agreement['alpha_ci'])} over "
        f"{agreement['pairable_items']} items rated by ≥ 2 of {agreement['raters']} raters",
        highlight=False, soft_wrap=True,
    )  # fmt: skip
    for pair in agreement["pairs"]:
        console.print(
            f"  κ {pair['raters'][0]} vs {pair['raters'][1]}: "
            f"{_estimate(pair['kappa'], pair['kappa_ci'])} (n={pair['n']})",
            highlight=False,
        )


def _estimate(value: float | None, ci: list[float] | None) -> str:
    """A figure with its 95% CI, or n/a."""
    if value is None:
        return "n/a"
    return f"{value:.3f}" + (f" [95% CI {ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
