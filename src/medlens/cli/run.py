"""`medlens run`: evaluate a model on a benchmark (resumable)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from medlens.cli.common import command, console, err_console, progress_bar
from medlens.cli.tracking_option import LOG_HELP, log_after, log_target
from medlens.core.terminal import terminal_safe, terminal_safe_line

if TYPE_CHECKING:
    from medlens.core.records import Record
    from medlens.execution.evaluate import RunOptions, RunOutcome

EXIT_TOO_MANY_ERRORS = 1


HELP = "Evaluate MODEL on BENCH; rerunning the same command resumes where it stopped."


@command("run", short_help="Evaluate MODEL on BENCH; rerunning the command resumes.", help=HELP)
def run(
    ctx: typer.Context,
    bench: Annotated[
        list[str] | None,
        typer.Option(
            "--bench", metavar="SPEC", help="Benchmark spec, e.g. demo or gmai:FILE.tsv (once)"
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            metavar="SPEC",
            help="Model spec, e.g. random or openai:NAME?base_url=URL (once)",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="Run name (default: <bench>-<model>)")] = None,
    out: Annotated[Path, typer.Option(help="Folder holding run directories")] = Path("runs"),
    limit: Annotated[int | None, typer.Option(help="Only the first N items")] = None,
    concurrency: Annotated[int, typer.Option(help="Requests in flight at once")] = 8,
    prompt: Annotated[
        str,
        typer.Option(
            help="Prompt: medlens, vlmeval, lmms-eval, evalscope, medevalkit, multimedeval, mmbu, "
            "or file:PATH (your template: .txt, or .toml with one per item kind)"
        ),
    ] = "medlens",
    extract: Annotated[
        str,
        typer.Option(
            help="Reading: medlens, vlmeval, lmms-eval, evalscope, medevalkit, multimedeval"
        ),
    ] = "medlens",
    probe: Annotated[str | None, typer.Option(help="Leakage probe, e.g. blank-image")] = None,
    manual: Annotated[
        str | None,
        typer.Option(
            help="CSV/TSV/XLSX of answers entered by hand (index, answer, entered_by[, note]): "
            "those items are not asked, and are recorded as entered by hand"
        ),
    ] = None,
    rewrite: Annotated[
        str | None,
        typer.Option(
            help="open: ask each MCQ open (MMBU's open form, gold = the right option's text); "
            "both: closed and open forms, paired"
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for random baselines and probes")] = 0,
    executor: Annotated[str, typer.Option(help="local or ray")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    max_error_rate: Annotated[float, typer.Option(help="Exit 1 above this error rate")] = 0.0,
    cache: Annotated[bool, typer.Option(help="Use the response cache")] = True,
    cache_check: Annotated[
        int,
        typer.Option(
            metavar="N",
            help="A server's cache hits asked live before the cache answers (0: none; "
            "docs/models.md says why 21)",
        ),
    ] = 21,
    judge: Annotated[
        str | None, typer.Option(help="Judge the answers afterwards with this model spec")
    ] = None,
    judge_protocol: Annotated[
        str, typer.Option(help="Judge protocol: equivalence, mmbu, rubric, choice or file:PATH")
    ] = "equivalence",
    allow_self_judge: Annotated[
        bool,
        typer.Option(
            "--allow-self-judge", help="With --judge: let the evaluated model judge its own answers"
        ),
    ] = False,
    strategy: Annotated[
        str,
        typer.Option(
            help="zero-shot, few-shot:K, cot, self-consistency:K, "
            "ensemble-refinement:K; combine with +"
        ),
    ] = "zero-shot",
    exemplars: Annotated[
        str | None, typer.Option(help="Benchmark spec of few-shot exemplars (default: its own)")
    ] = None,
    max_retry_rate: Annotated[
        float | None,
        typer.Option(
            help="Stop the run when more than this share of requests are retries "
            "(a retry rate above 0.05 is always called out)"
        ),
    ] = None,
    model_info: Annotated[
        str | None,
        typer.Option(
            help="cutoff=YYYY-MM: the model's training cutoff, set beside the "
            "benchmark's release on the protocol card"
        ),
    ] = None,
    admission: Annotated[
        Path | None,
        typer.Option(
            help="TOML of source admission facts (licence, labels, release) recorded for the "
            "protocol card over the ones medlens ships"
        ),
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
    retry_errors: Annotated[
        bool, typer.Option(help="Also retry items with permanent (input/image) errors")
    ] = False,
    order: Annotated[
        str, typer.Option(help="image (questions sharing an image sent together) or item")
    ] = "image",
    yes: Annotated[
        bool, typer.Option("--yes", help="Allow more than 64 calls per item (self-consistency:K)")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show the item count and first prompts; no model call")
    ] = False,
    config: Annotated[
        Path | None, typer.Option(help="TOML file of these options (flags override it)")
    ] = None,
    price: Annotated[
        str | None,
        typer.Option(help="With --dry-run: estimate the cost, input=USD_PER_1M,output=USD_PER_1M"),
    ] = None,
    vocab: Annotated[
        list[Path] | None,
        typer.Option("--vocab", help="Extra vocabulary file (medlens reading vocab shows the layout)"),
    ] = None,
    log: Annotated[str | None, typer.Option("--log", help=LOG_HELP)] = None,
    adaptive: Annotated[
        Path | None,
        typer.Option(
            "--adaptive", metavar="BANK.json",
            help="Ask only the items needed: batches chosen with this item bank, until the 95% "
            "interval's half-width is --target-halfwidth",
        ),
    ] = None,
    target_halfwidth: Annotated[
        float | None,
        typer.Option(help="With --adaptive or --baseline: stop at this 95% half-width, e.g. 0.02"),
    ] = None,
    max_items: Annotated[
        int | None, typer.Option(help="With --adaptive: ask at most N items")
    ] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            metavar="RUN",
            help="A previous full run of a related model (the last checkpoint) as the adaptive "
            "run's predictor, alone or with --adaptive BANK.json",
        ),
    ] = None,
) -> None:  # fmt: skip
    """Evaluate MODEL on BENCH; rerunning the same command resumes where it stopped.

    Over 60 lines only because typer declares each of the 36 options in the signature; the
    body merges the config file, then dry-runs, or runs (and judges) and summarises.
    """
    from medlens.cli.run_config import merged_options
    from medlens.core.errors import SpecError

    values = single_specs(merged_options(ctx, config))
    planner = adaptive_planner(values)  # bank and baseline read and checked before the run
    if values.get("exclude") is not None:
        values["exclude"] = str(values["exclude"])
    values["vocab"] = tuple(str(path) for path in values.get("vocab") or ())
    if values.get("admission") is not None:  # checked before anything is written
        from medlens.checks.admission import admission_tables

        values["admission"] = admission_tables(values["admission"])
    options = run_options(values)
    tracking = log_target(values.get("log"))
    if price is not None and not dry_run:
        raise SpecError("--price estimates a run before it starts: use it with --dry-run")
    if dry_run:
        from medlens.cli.run_preview import print_dry_run

        if planner is not None:
            raise SpecError("--dry-run: an adaptive run chooses its items as answers come; "
                            "preview the benchmark without --adaptive/--baseline")  # fmt: skip
        print_dry_run(options, price)
        return
    judging = None
    if values.get("allow_self_judge") and not values.get("judge"):
        raise SpecError("--allow-self-judge needs a judge: give --judge SPEC")
    if values.get("judge"):  # checked before answering, so a bad judge spec costs no run
        from medlens.core.specs import parse_spec
        from medlens.judges.options import judge_options_for_run

        judging = judge_options_for_run(
            parse_spec(values["judge"]), values["judge_protocol"], options.concurrency,
            options.cache, bool(values.get("allow_self_judge")), options.model,
        )  # fmt: skip
    run_and_summarise(options, float(values["max_error_rate"]), judging, tracking,
                      values.get("max_retry_rate"), planner)  # fmt: skip


ADAPTIVE_ONLY = ("target_halfwidth", "max_items")


def adaptive_planner(values: dict[str, Any]) -> Any:
    """The planner of an adaptive run (``--adaptive``/``--baseline``), or None; its options are
    taken out of `values` (``--stratify`` names its groups instead of a sample's strata)."""
    from medlens.core.errors import SpecError

    bank, baseline = values.pop("adaptive", None), values.pop("baseline", None)
    extra = {key: values.pop(key, None) for key in ADAPTIVE_ONLY}
    if bank is None and baseline is None:
        for key, value in extra.items():
            if value is not None:
                raise SpecError(f"--{key.replace('_', '-')}: only with --adaptive BANK.json or "
                                "--baseline RUN")  # fmt: skip
        return None
    if extra["target_halfwidth"] is None:
        raise SpecError(
            "--target-halfwidth: an adaptive run needs the half-width to stop at, e.g. 0.02"
        )
    # --stratify names the groups (with --sample the run itself refuses the adaptive run)
    stratify = values.pop("stratify", None) if values.get("sample") is None else None
    from medlens.execution.selection import parse_stratify
    from medlens.items.adaptive import AdaptiveSettings
    from medlens.items.adaptive_planner import AdaptivePlanner

    settings = AdaptiveSettings(
        bank=None if bank is None else Path(bank), baseline=None if baseline is None else Path(baseline),
        target_halfwidth=float(extra["target_halfwidth"]), max_items=extra["max_items"],
        stratify=parse_stratify(stratify), seed=int(values.get("seed") or 0),
        first_batch=int(values.get("concurrency") or 8),
    )  # fmt: skip
    return AdaptivePlanner(settings)


def single_specs(values: dict[str, Any]) -> dict[str, Any]:
    """`run` is one model on one benchmark: a repeated ``--model`` or ``--bench`` is refused (typer
    would keep the last one silently) and points at ``medlens study``."""
    from medlens.core.errors import SpecError

    for key in ("bench", "model"):
        given = values.get(key) or []
        if len(given) > 1:
            raise SpecError(
                f"--{key} given {len(given)} times ({', '.join(given)}): `run` evaluates one model "
                "on one benchmark; for several, write a study file and run `medlens study "
                "STUDY.toml` (docs/studies.md)"
            )
        values[key] = given[0] if given else None
    return values


def run_options(values: Mapping[str, Any]) -> RunOptions:
    """RunOptions from the merged flags and config values (one key per RunOptions field); the
    benchmark, model and exemplar specs and the strategy are parsed here, once."""
    from dataclasses import fields

    from medlens.core.errors import SpecError
    from medlens.execution.evaluate import RunOptions

    for required in ("bench", "model"):
        if not values.get(required):
            raise SpecError(f"--{required} is required (on the command line or in --config)")
    rate = float(values["max_error_rate"])
    if not 0.0 <= rate <= 1.0:
        raise SpecError(f"--max-error-rate {rate:g}: expected a rate from 0 to 1")
    retry = values.get("max_retry_rate")
    if retry is not None and not 0.0 <= float(retry) < 1.0:
        raise SpecError(f"--max-retry-rate {float(retry):g}: expected a rate from 0 to below 1")
    from medlens.api import parsed_run_values

    names = {f.name for f in fields(RunOptions)}
    return RunOptions(**parsed_run_values({k: v for k, v in values.items() if k in names}))


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
