"""`medlens run`: evaluate a model on a benchmark (resumable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import command, console, err_console, progress_bar

if TYPE_CHECKING:
    from medlens.evaluate import RunOptions, RunOutcome

EXIT_TOO_MANY_ERRORS = 1


@command("run")
def run(
    bench: Annotated[
        str, typer.Option("--bench", help="Benchmark spec, e.g. demo or gmai:FILE.tsv")
    ],
    model: Annotated[
        str, typer.Option("--model", help="Model spec, e.g. random or openai:NAME?base_url=URL")
    ],
    name: Annotated[str | None, typer.Option(help="Run name (default: <bench>-<model>)")] = None,
    out: Annotated[Path, typer.Option(help="Folder holding run directories")] = Path("runs"),
    limit: Annotated[int | None, typer.Option(help="Only the first N items")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once")] = 8,
    prompt: Annotated[str, typer.Option(help="Prompt style: medlens or vlmeval")] = "medlens",
    extract: Annotated[str, typer.Option(help="Extraction: medlens or vlmeval")] = "medlens",
    probe: Annotated[str | None, typer.Option(help="Leakage probe, e.g. blank-image")] = None,
    seed: Annotated[int, typer.Option(help="Seed for random baselines and probes")] = 0,
    executor: Annotated[str, typer.Option(help="local or ray")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    max_error_rate: Annotated[float, typer.Option(help="Exit 1 above this error rate")] = 0.0,
    cache: Annotated[bool, typer.Option(help="Use the response cache")] = True,
) -> None:
    """Evaluate MODEL on BENCH; rerunning the same command resumes where it stopped."""
    from medlens.evaluate import RunOptions
    from medlens.report.text import summary_blocks

    options = RunOptions(
        bench=bench,
        model=model,
        out=out,
        name=name,
        limit=limit,
        concurrency=concurrency,
        prompt=prompt,
        extract=extract,
        probe=probe,
        seed=seed,
        executor=executor,
        ray_address=ray_address,
        cache=cache,
    )
    outcome = evaluate_with_progress(options)
    for block in summary_blocks(outcome.results):
        console.print(block)
    err_console.print(f"run directory: {outcome.store.path}", highlight=False)
    error_rate = outcome.results["rates"]["error"]
    if error_rate > max_error_rate:
        err_console.print(
            f"error rate {error_rate:.3f} exceeds --max-error-rate {max_error_rate}; "
            "rerun to retry the failed items",
            highlight=False,
        )
        raise typer.Exit(EXIT_TOO_MANY_ERRORS)


def evaluate_with_progress(options: RunOptions) -> RunOutcome:
    """Run the evaluation under a progress bar that appears only once loading succeeded."""
    from medlens.evaluate import evaluate

    bar = progress_bar("medlens run")
    task = bar.add_task("evaluating", total=None)

    def on_start(total: int, done: int) -> None:
        bar.start()  # after validation, so that input errors stay a single line
        bar.update(task, total=total, completed=done)
        if done:
            bar.console.print(f"resuming: {done} of {total} items already answered")

    try:
        return evaluate(options, on_start, lambda record: bar.advance(task))
    finally:
        if bar.live.is_started:
            bar.stop()
