"""`medlens judge`: score a finished run's open answers with a judge model (resumable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from medlens.cli.common import command, console, err_console, progress_bar
from medlens.cli.tracking_option import LOG_HELP, log_after, log_target
from medlens.core.terminal import terminal_safe

if TYPE_CHECKING:
    from medlens.judges.options import JudgeOptions
    from medlens.judges.stage import JudgeOutcome


HELP = "Judge RUN's answers with a judge model (several: a panel); rerunning resumes."


@command("judge", short_help="Judge RUN's answers with a judge model or a panel.", help=HELP)
def judge(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    protocol: Annotated[
        str, typer.Option("--protocol", help="equivalence, mmbu, rubric, choice or file:PATH")
    ],
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Judge model spec: openai:NAME?base_url=URL, hf:PATH, replay:DIR; "
            "give it several times for a panel",
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(help="Judge name (default: the judge model's; a panel's: panel)"),
    ] = None,
    scope: Annotated[
        str | None, typer.Option(help="unresolved (rules first) or all (default: per protocol)")
    ] = None,
    weights: Annotated[
        str | None, typer.Option(help="Rubric weights, e.g. visual_accuracy=2,coherence=0.5")
    ] = None,
    repeats: Annotated[int, typer.Option(help="Judge each item K times (temperature > 0)")] = 1,
    concurrency: Annotated[int, typer.Option(help="Judge calls in flight at once")] = 8,
    images: Annotated[bool, typer.Option("--images", help="Show the judge the images")] = False,
    with_question: Annotated[
        bool, typer.Option("--with-question", help="Show the question (equivalence)")
    ] = False,
    reports: Annotated[
        bool, typer.Option("--reports", help="Also judge report items (equivalence)")
    ] = False,
    executor: Annotated[str, typer.Option(help="local or ray")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    cache: Annotated[bool, typer.Option(help="Use the response cache")] = True,
    swap: Annotated[
        bool, typer.Option("--swap", help="Ask each item in both option orders (choice)")
    ] = False,
    allow_self_judge: Annotated[
        bool,
        typer.Option("--allow-self-judge", help="Let the evaluated model judge its own answers"),
    ] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Allow more than 64 repeats per item")] = False,
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors", help="Ask again every judgement without a verdict (unparseable too)"
        ),
    ] = False,
    log: Annotated[str | None, typer.Option("--log", help=LOG_HELP)] = None,
) -> None:
    """`medlens judge` (help: HELP).

    Over 60 lines only because typer declares each option in the signature.
    """
    from medlens.core.errors import SpecError
    from medlens.core.specs import parse_spec
    from medlens.judges.options import JudgeOptions
    from medlens.judges.protocols import parse_weights

    if not judge:
        flag = "--allow-self-judge needs a judge: " if allow_self_judge else ""
        raise SpecError(f"{flag}give --judge SPEC (several --judge for a panel)")
    specs = tuple(parse_spec(text) for text in judge)
    tracking = log_target(log)
    options = JudgeOptions(
        run_dir=run,
        judge=specs[0],
        panel=specs if len(specs) > 1 else (),
        swap=swap,
        allow_self_judge=allow_self_judge,
        protocol=protocol,
        name=name,
        scope=scope,
        weights=parse_weights(weights),
        repeats=repeats,
        concurrency=concurrency,
        images=images,
        with_question=with_question,
        reports=reports,
        cache=cache,
        executor=executor,
        ray_address=ray_address,
        yes=yes,
        retry_errors=retry_errors,
    )
    outcome = judge_with_progress(options)
    print_judge_summary(outcome)
    log_after(tracking, [run])


def judge_with_progress(options: JudgeOptions) -> JudgeOutcome:
    """Run the judge stage under a progress bar that appears once loading succeeded."""
    from medlens.judges.stage import judge_run

    bar = progress_bar("medlens judge", unit="judgements")
    task = bar.add_task("judging", total=None)

    def on_start(total: int, done: int) -> None:
        bar.start()
        bar.update(task, total=total, completed=done)
        if done:
            bar.console.print(
                f"{done} of {total} judgements need no call (rules, or judged before)"
            )

    try:
        return judge_run(options, on_start, lambda line: bar.advance(task))
    finally:
        if bar.live.is_started:  # (stop() prints a line on a non-terminal)
            bar.stop()


def print_judge_summary(outcome: JudgeOutcome) -> None:
    from medlens.analysis.artifacts import results_after_writing
    from medlens.report.judges import judge_text_lines

    results = results_after_writing(outcome.run)
    entry = results["judges"].get(outcome.folder.name)
    if entry is not None:
        for line in judge_text_lines(outcome.folder.name, entry):
            console.print(terminal_safe(line), highlight=False, markup=False, soft_wrap=True)
    err_console.print(f"judge folder: {outcome.folder}", highlight=False)
