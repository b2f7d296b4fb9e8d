"""`medlens study STUDY.toml`: N models × M benchmarks, judged and boarded, as one resumable command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import command, console, err_console
from medlens.cli.tracking_option import LOG_HELP, log_after, log_target
from medlens.core.notation import split_list
from medlens.core.terminal import terminal_safe

if TYPE_CHECKING:
    from medlens.study.conduct import PreparedStudy, StudyResult

EXIT_TOO_MANY_ERRORS = 1
EXIT_BAD_INPUT = 2
EXIT_STOPPED = 3
"""The study stopped before its end (the budget): rerun the same command to continue."""


@command("study", short_help="Run, judge and board every model on every benchmark of FILE.")
def study(
    file: Annotated[
        Path, typer.Argument(help="Study file (TOML): models, benchmarks, judges, boards")
    ],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the plan and its projected cost; no model call")
    ] = False,
    budget: Annotated[
        float | None, typer.Option(help="Stop before the projected cost passes this many USD")
    ] = None,
    only: Annotated[
        str | None, typer.Option(help="Run only these models (labels, comma-separated)")
    ] = None,
    executor: Annotated[
        str, typer.Option(help="local (threads) or ray (one task per run)")
    ] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Requests in flight per endpoint (a model's own wins)")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder holding studies")] = Path("studies"),
    order: Annotated[
        str, typer.Option(help="image (questions sharing an image sent together) or item")
    ] = "image",
    max_error_rate: Annotated[float, typer.Option(help="Exit 1 when a run errs above this")] = 0.0,
    cache: Annotated[bool, typer.Option(help="Use the response cache")] = True,
    reports: Annotated[
        bool, typer.Option(help="Write each finished run's report.html (the index links them)")
    ] = True,
    log: Annotated[str | None, typer.Option("--log", help=LOG_HELP)] = None,
) -> None:
    """Run every model on every benchmark of FILE, judge and board them; rerun to resume."""
    from medlens.study.conduct import prepare_study
    from medlens.study.file import load_study
    from medlens.study.plan import StudySettings

    settings = StudySettings(
        out=out, only=tuple(split_list(only)),
        concurrency=concurrency, executor=executor, ray_address=ray_address, cache=cache,
        order=order, budget=budget, max_error_rate=max_error_rate, reports=reports,
    )  # fmt: skip
    tracking = log_target(log)
    prepared = prepare_study(load_study(file), settings)
    for addition in prepared.additions:
        err_console.print(f"note: added since the study began: {addition}", highlight=False)
    if dry_run:
        from medlens.cli.study_view import print_dry_run

        print_dry_run(prepared)
        return
    result = conduct_with_progress(prepared)
    log_after(tracking, finished_runs(prepared, result))
    finish(prepared, result)


def finished_runs(prepared: PreparedStudy, result: StudyResult) -> list[Path]:
    """The run folders of the runs that finished (with or without errored items)."""
    from medlens.execution.evaluate import run_dir_of

    states = {key: r.state for key, r in result.outcome.results.items()}
    return [run_dir_of(job.options) for job in prepared.plan.selected_runs
            if states.get(job.key) in ("done", "errors")]  # fmt: skip


def conduct_with_progress(prepared: PreparedStudy) -> StudyResult:
    from medlens.cli.study_view import StudyProgress
    from medlens.study.conduct import conduct

    display = StudyProgress()
    try:
        return conduct(prepared, display)
    finally:
        display.close()


def finish(prepared: PreparedStudy, result: StudyResult) -> None:
    """The summary table, where the outputs are, and the exit code."""
    from medlens.cli.study_view import print_summary

    print_summary(prepared, result)
    outcome = result.outcome
    failed = [(key, r.message) for key, r in outcome.results.items() if r.state == "failed"]
    if failed:
        key, message = failed[0]
        more = f" (and {len(failed) - 1} more; see the summary)" if len(failed) > 1 else ""
        err_console.print(f"medlens: error: {key}: {terminal_safe(message)}{more}",
                          highlight=False, markup=False, soft_wrap=True)  # fmt: skip
        raise typer.Exit(EXIT_BAD_INPUT)
    if outcome.stop_reason:
        err_console.print(f"stopped: {outcome.stop_reason}", highlight=False, markup=False,
                          soft_wrap=True)  # fmt: skip
        raise typer.Exit(EXIT_STOPPED)
    rate = prepared.plan.settings.max_error_rate
    over = [key for key, r in outcome.results.items()
            if r.state == "errors" and (r.summary.get("error_rate") or 0) > rate]  # fmt: skip
    if over:
        console.print(f"runs with errors above --max-error-rate {rate}: {', '.join(over)}; "
                      "rerun the same command to retry them", highlight=False)  # fmt: skip
        raise typer.Exit(EXIT_TOO_MANY_ERRORS)
