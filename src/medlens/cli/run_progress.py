"""A run under a progress bar, then its summary: errors counted on the bar as they come, a retry
rate called out, the summary tables, the optional judging and tracking, and exit 1 above the
allowed error rate (owns what `medlens run` shows while and after it runs)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import typer

from medlens.cli.common import console, err_console, progress_bar
from medlens.cli.tracking_option import log_after
from medlens.core.terminal import terminal_safe, terminal_safe_line

if TYPE_CHECKING:
    from medlens.core.records import Record
    from medlens.execution.evaluate import RunOptions, RunOutcome

EXIT_TOO_MANY_ERRORS = 1


def run_and_summarise(
    options: RunOptions, max_error_rate: float, judging: Any = None, tracking: Any = None,
    max_retry_rate: float | None = None, planner: Any = None,
) -> None:  # fmt: skip
    """Run, print the summary, judge the answers when asked, log to a tracker when asked, and
    exit 1 above the error rate (or when the retry rate passed `max_retry_rate` and the run
    stopped)."""
    from medlens.report.text import summary_blocks
    from medlens.runs.health import RetryRateExceeded

    try:
        outcome = evaluate_with_progress(options, max_retry_rate, planner)
    except RetryRateExceeded as exc:
        err_console.print(str(exc), highlight=False, markup=False, soft_wrap=True)
        raise typer.Exit(EXIT_TOO_MANY_ERRORS) from None
    from medlens.analysis.artifacts import results_after_writing

    results = results_after_writing(outcome.store.view())
    for block in summary_blocks(results, outcome.store.path):
        console.print(block)
    if planner is not None:
        from medlens.cli.estimate import print_adaptive

        print_adaptive(outcome.store.path)
    err_console.print(f"run directory: {outcome.store.path}", highlight=False)
    if judging is not None:
        from dataclasses import replace

        from medlens.cli.judge import judge_with_progress, print_judge_summary

        judged = judge_with_progress(replace(judging, run_dir=outcome.store.path))
        print_judge_summary(judged)
    log_after(tracking, [outcome.store.path])
    error_rate = results["rates"]["error"]
    if error_rate > max_error_rate:
        from medlens.runs.retry import retry_hint

        records = outcome.store.records().values()
        for line in error_lines(records):  # server messages are untrusted text
            err_console.print(
                terminal_safe_line(line), highlight=False, markup=False, soft_wrap=True
            )
        err_console.print(
            f"error rate {error_rate:.3f} exceeds --max-error-rate {max_error_rate}; "
            + retry_hint(records),  # names --retry-errors and the file for permanent errors
            highlight=False, markup=False, soft_wrap=True,
        )  # fmt: skip
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


def errors_text(errors: Counter[str]) -> str:
    """``12 errors: 9 connection, 3 timeout`` for the progress bar."""
    total = sum(errors.values())
    kinds = ", ".join(f"{n} {kind}" for kind, n in errors.most_common())
    return f"{total} error{'s' if total != 1 else ''}: {kinds}"


def evaluate_with_progress(
    options: RunOptions, max_retry_rate: float | None = None, planner: Any = None
) -> RunOutcome:
    """Run the evaluation under a progress bar that appears only once loading succeeded; a
    retry rate above 5% is called out as it happens (``runs.health.RetryWatch``)."""
    from medlens.execution.evaluate import evaluate
    from medlens.runs.health import RetryWatch

    watch = RetryWatch(max_retry_rate)

    bar = progress_bar("medlens run")
    task = bar.add_task("evaluating", total=None)

    def on_start(total: int, done: int) -> None:
        bar.start()  # after validation, so that input errors stay a single line
        bar.update(task, total=total, completed=done)
        if done:
            bar.console.print(f"resuming: {done} of {total} items already answered")

    def on_note(message: str) -> None:
        err_console.print(
            f"note: {terminal_safe(message)}", highlight=False, markup=False, soft_wrap=True
        )

    errors: Counter[str] = Counter()

    def on_progress(record: Record) -> None:
        error = record.get("error")
        if error:  # a failing server shows on the bar while the run goes on, not only at the end
            errors[error.get("type", "error")] += 1
            bar.update(task, description=f"evaluating ({errors_text(errors)})")
        bar.advance(task)
        alert = watch.add(record)
        if alert is not None:
            bar.console.print(f"warning: {alert}", highlight=False, markup=False, soft_wrap=True)

    try:
        return evaluate(options, on_start, on_progress, on_note, planner=planner)
    finally:
        if bar.live.is_started:  # (stop() prints a line on a non-terminal)
            bar.stop()  # the bar ends with the last answer
