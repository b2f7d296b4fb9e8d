"""`medlens check contamination` (old name `audit`): n-gram contamination audit of a benchmark against a text corpus."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import command, console, progress_bar, write_json
from medlens.cli.groups import check_app

if TYPE_CHECKING:
    from medlens.checks.audit import AuditReport


@command("contamination", under=check_app)
def audit(
    spec: Annotated[str, typer.Argument(help="Benchmark spec, e.g. medqa:data/test.jsonl")],
    corpus: Annotated[
        list[Path],
        typer.Option("--corpus", help="Corpus file or folder (repeatable; read as UTF-8 text)"),
    ],
    n: Annotated[int, typer.Option("--n", help="n-gram length in word tokens (1 to 32)")] = 8,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold",
            min=0.0,
            max=1.0,
            help="Flag an item when this share of its n-grams is in the corpus",
        ),
    ] = 0.7,
    show: Annotated[int, typer.Option("--show", help="Flagged items to list")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Audit contamination: share of each item's n-grams (question + options) found in a corpus."""
    from medlens.api import load_benchmark
    from medlens.checks.audit import audit as run_audit

    benchmark = load_benchmark(spec)
    bar = progress_bar("medlens check contamination", unit="tokens")
    task = bar.add_task("corpus", total=None)

    def on_tokens(count: int) -> None:
        if not bar.live.is_started:  # only once the benchmark's n-grams exist: errors stay one line
            bar.start()
        bar.advance(task, count)

    try:
        report = run_audit(benchmark, corpus, n=n, threshold=threshold, on_tokens=on_tokens)
    finally:
        if bar.live.is_started:
            bar.stop()
    if as_json:
        write_json(report.to_json())
        return
    _print_text(report, show)


def _print_text(report: AuditReport, show: int) -> None:
    from rich.table import Table
    from rich.text import Text

    flagged = report.flagged()
    audited = len(report.items)
    console.print(
        Text(
            f"{report.spec}: {audited:,} items audited ({report.too_short:,} shorter than "
            f"{report.n} tokens), corpus {report.corpus_files:,} files / {report.corpus_tokens:,} tokens"
        )
    )
    rate = 100 * len(flagged) / audited if audited else 0.0
    console.print(
        Text(
            f"flagged (≥ {100 * report.threshold:.0f}% of {report.n}-grams in corpus): "
            f"{len(flagged):,} ({rate:.1f}%)"
        )
    )
    table = Table(title=Text("by source"), title_justify="left")
    for header in ("source", "n", "flagged", "rate %"):
        table.add_column(header, justify="left" if header == "source" else "right")
    for source, row in report.by_source().items():
        table.add_row(
            Text(source), f"{row['n']:,}", f"{row['flagged']:,}", f"{100 * row['rate']:.1f}"
        )
    console.print(table)
    for item in sorted(flagged, key=lambda i: -i.overlap)[:show]:
        console.print(Text(f"  {item.id}: {100 * item.overlap:.0f}% of {item.n_grams} n-grams"))
