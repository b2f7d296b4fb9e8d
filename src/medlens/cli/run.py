"""`medlens run`: evaluate a model on a benchmark (resumable)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

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
    judge: Annotated[
        str | None, typer.Option(help="Judge the answers afterwards with this model spec")
    ] = None,
    judge_protocol: Annotated[
        str, typer.Option(help="Judge protocol: equivalence, rubric, choice or file:PATH")
    ] = "equivalence",
    strategy: Annotated[
        str,
        typer.Option(help="zero-shot, few-shot:K, cot, self-consistency:K; combine with +"),
    ] = "zero-shot",
    exemplars: Annotated[
        str | None, typer.Option(help="Benchmark spec of few-shot exemplars (default: its own)")
    ] = None,
    where: Annotated[
        str | None, typer.Option(help="Only items matching, as in slice: 'modality=CT'")
    ] = None,
    sample: Annotated[int | None, typer.Option(help="A seeded sample of N items")] = None,
    stratify: Annotated[
        str | None, typer.Option(help="AXIS[,AXIS]: proportional allocation of --sample")
    ] = None,
    exclude: Annotated[
        Path | None, typer.Option(help="Drop the item ids listed in this file")
    ] = None,
) -> None:
    """Evaluate MODEL on BENCH; rerunning the same command resumes where it stopped."""
    from medlens.errors import SpecError
    from medlens.evaluate import RunOptions
    from medlens.report.text import summary_blocks

    if not 0.0 <= max_error_rate <= 1.0:
        raise SpecError(f"--max-error-rate {max_error_rate:g}: expected a rate from 0 to 1")
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
        strategy=strategy,
        exemplars=exemplars,
        where=where,
        sample=sample,
        stratify=stratify,
        exclude=str(exclude) if exclude else None,
    )
    judging = None
    if judge is not None:  # checked before answering, so a bad judge spec costs no run
        from medlens.judges.stage import judge_options_for_run

        judging = judge_options_for_run(judge, judge_protocol, concurrency, cache)
    outcome = evaluate_with_progress(options)
    for block in summary_blocks(outcome.results, outcome.store.path):
        console.print(block)
    err_console.print(f"run directory: {outcome.store.path}", highlight=False)
    if judging is not None:
        from dataclasses import replace

        from medlens.cli.judge import judge_with_progress, print_judge_summary

        judged = judge_with_progress(replace(judging, run_dir=outcome.store.path))
        print_judge_summary(judged)
    error_rate = outcome.results["rates"]["error"]
    if error_rate > max_error_rate:
        for line in error_lines(outcome.store.records().values()):
            err_console.print(line, highlight=False, markup=False, soft_wrap=True)
        err_console.print(
            f"error rate {error_rate:.3f} exceeds --max-error-rate {max_error_rate}; "
            "rerun to retry the failed items",
            highlight=False,
        )
        raise typer.Exit(EXIT_TOO_MANY_ERRORS)


def error_lines(records: Iterable[Mapping[str, Any]]) -> list[str]:
    """One line per error type with its count and one example, so "every item failed" says why."""
    examples: dict[str, str] = {}
    counts: Counter[str] = Counter()
    for record in records:
        error = record.get("error")
        if error:
            counts[error["type"]] += 1
            examples.setdefault(error["type"], f"item {record['id']}: {error['message']}")
    return [f"{kind} errors: {n} (e.g. {examples[kind]})" for kind, n in counts.most_common()]


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
