"""`medlens check integrity` (`medlens check SPEC`): the integrity checklist of a benchmark (exit 1 when a check fails)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import command, console, progress_bar, write_json
from medlens.cli.groups import check_app

if TYPE_CHECKING:
    from medlens.checks.check import CheckReport

_STYLE = {"pass": "green", "fail": "bold red", "warn": "yellow", "info": "cyan"}


@command(
    "integrity",
    under=check_app,
    help="Check a benchmark's integrity: counts, answers, images, gold in options, ids, axes, leakage.",
)
def check(
    spec: Annotated[str, typer.Argument(help="Benchmark spec, e.g. slake:data/slake?split=test")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
    against: Annotated[
        list[str] | None,
        typer.Option(
            "--against",
            help="Another split's spec to test for shared images "
            "(repeatable; default: the other splits the loader knows)",
        ),
    ] = None,
    sample: Annotated[
        int, typer.Option("--sample", help="Images to decode, sampled uniformly (0 = all)")
    ] = 32,
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too")] = False,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the image sample")] = 0,
    vocabulary: Annotated[
        str | None,
        typer.Option(
            help="A vocabulary JSON file ({'axes': {axis: [values]}}) the axis values "
            "must come from (default for gmai: GMAI-MMBench's own)"
        ),
    ] = None,
    lexicon: Annotated[
        str | None,
        typer.Option(
            help="A TSV of wording terms (term<TAB>category) added to the built-in lexicon "
            "that the wording check looks for in image questions"
        ),
    ] = None,
    admission: Annotated[
        str | None,
        typer.Option(
            help="A TOML file of source admission facts (licence, labels, release) laid over "
            "the ones medlens ships"
        ),
    ] = None,
) -> None:
    """Check a benchmark's integrity: counts, answers, images, gold in options, ids, axes, leakage.

    Over 60 lines only because typer declares each of its options in the signature.
    """
    from medlens.api import load_benchmark
    from medlens.checks.check import run_checks
    from medlens.checks.leakage import sibling_benchmarks

    # Lenient: whole-file problems a loader can tolerate become failed checks listing every
    # offending row, not an error at the first (`medlens run` still refuses such a file).
    from medlens.checks.vocabulary import load_vocabulary
    from medlens.core.lexicon import wording_lexicon

    vocab = load_vocabulary(vocabulary) if vocabulary is not None else None  # before any work
    words = wording_lexicon(lexicon)
    from medlens.checks.admission import admission_facts

    facts = admission_facts(admission)
    benchmark = load_benchmark(spec, lenient=True)
    if against:
        others = [load_benchmark(text, lenient=True) for text in against]
        skipped = list[str]()
    else:
        others, skipped = sibling_benchmarks(benchmark)
    with progress_bar("medlens check") as bar:
        task = bar.add_task("checking", total=None)
        report = run_checks(
            benchmark,
            others=others,
            skipped=skipped,
            sample_size=sample,
            seed=seed,
            on_item=lambda: bar.advance(task),
            vocabulary=vocab,
            lexicon=words,
            admission=facts,
        )
    if as_json:
        write_json(report.to_json(strict))
    else:
        _print_text(report, strict)
    if report.failed(strict):
        raise typer.Exit(1)


def _print_text(report: CheckReport, strict: bool) -> None:
    from rich.text import Text

    console.print(Text(f"{report.spec} (split {report.split}): {report.n_items:,} items"))
    for result in report.checks:
        line = Text(f"{result.status.upper():5} ", style=_STYLE[result.status])
        line.append(f"{result.name}: {result.summary}")
        console.print(line)
        for detail in result.details:
            console.print(Text(f"      {detail}"))
    failed = report.failed(strict)
    verdict = f"FAILED: {', '.join(failed)}" if failed else "all checks passed"
    readiness = next((r for r in report.checks if r.name == "readiness"), None)
    failing = [] if readiness is None else [
        item["number"] for item in readiness.data.get("items", []) if item.get("status") == "fail"
    ]  # fmt: skip
    if failing:  # readiness never fails the check, but a verdict under a [fail] line must say so
        verdict += (
            f"; data readiness: item{'s' if len(failing) > 1 else ''} "
            f"{', '.join(map(str, failing))} fail (advice, not a failed check: see above)"
        )
    console.print(Text(verdict, style="bold red" if failed else "bold green"))
