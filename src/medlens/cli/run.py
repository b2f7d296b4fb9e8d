"""`medlens run`: evaluate a model on a benchmark (resumable). Owns the command and its options;
their values are parsed in ``run_values``, the run and its summary shown by ``run_progress``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command
from medlens.cli.run_progress import EXIT_TOO_MANY_ERRORS, error_lines, run_and_summarise
from medlens.cli.run_values import adaptive_planner, run_options, single_specs
from medlens.cli.tracking_option import LOG_HELP, log_target

__all__ = ["EXIT_TOO_MANY_ERRORS", "error_lines", "run", "run_options"]


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
