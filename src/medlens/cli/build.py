"""`medlens build from-labels` (`medlens build LABELS …`): a benchmark from labelled images (jsonl + image files, or a VLMEvalKit TSV)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, err_console, progress_bar
from medlens.cli.groups import build_app

DRAFT_WITH = "Model spec drafting questions per label and dimension → review sheet (.xlsx/.csv)"
DIMENSIONS = "Draft dimensions, comma list (default all: identify, describe, reason)"
DISTRACTORS_FROM = "Model specs proposing distractors, comma list → annotators' pick sheet"
HELP = "Build a benchmark from labelled images; same inputs and seed give identical bytes."


@command("from-labels", under=build_app, help=HELP)
def build(
    labels: Annotated[
        Path, typer.Argument(help="Labels CSV or JSONL (image, label, box, mask, …)")
    ],
    output: Annotated[Path, typer.Option("--output", help="OUT.jsonl or OUT.tsv")],
    images: Annotated[
        Path | None, typer.Option("--images", help="Images root (default: the labels' folder)")
    ] = None,
    granularity: Annotated[
        str, typer.Option("--granularity", help="image, box, mask or contour")
    ] = "image",
    task: Annotated[str, typer.Option("--task", help="classify or detect")] = "classify",
    options: Annotated[
        int, typer.Option("--options", help="K options per closed item; 0 = open items")
    ] = 4,
    template: Annotated[
        str,
        typer.Option("--template", help="none, modality, full (comma list or all: one item each)"),
    ] = "none",
    seed: Annotated[int, typer.Option("--seed", help="Seed of distractors and option order")] = 0,
    question: Annotated[
        str | None, typer.Option("--question", help="Question text ({label}, {colour} filled in)")
    ] = None,
    confusable: Annotated[
        Path | None,
        typer.Option("--confusable", help="File of label pairs never used as gold + distractor"),
    ] = None,
    lint: Annotated[
        str | None,
        typer.Option("--lint", help="Words to warn about in questions (a,b,c or a file)"),
    ] = None,
    lexicon: Annotated[
        Path | None,
        typer.Option(
            "--lexicon",
            help="TSV of extra wording terms (term<TAB>category) added to the built-in lexicon",
        ),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse a label that cannot become an item")
    ] = False,
    strict_pool: Annotated[
        bool,
        typer.Option(
            "--strict-pool",
            help="Distractors only from the same body part and modality (no widening)",
        ),
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
    draft_with: Annotated[str | None, typer.Option("--draft-with", help=DRAFT_WITH)] = None,
    dimensions: Annotated[str | None, typer.Option("--dimensions", help=DIMENSIONS)] = None,
    draft_templates: Annotated[
        Path | None, typer.Option("--draft-templates", help="TOML prompt templates per dimension")
    ] = None,
    distractors_from: Annotated[
        str | None, typer.Option("--distractors-from", help=DISTRACTORS_FROM)
    ] = None,
    candidates: Annotated[int, typer.Option("--candidates", help="Candidates per model")] = 4,
    annotators: Annotated[int, typer.Option("--annotators", help="Pick columns")] = 3,
) -> None:
    """Build a benchmark from labelled images; same inputs and seed give identical bytes.

    Over 60 lines only because typer declares each of the 23 options in the signature.
    """
    from medlens.builder.labelled import BuildOptions, LabelledBuild
    from medlens.builder.labels import read_confusable, read_labels
    from medlens.builder.output import claim_output, output_format
    from medlens.builder.wording import lint_words, parse_templates
    from medlens.core.lexicon import wording_lexicon

    words = wording_lexicon(lexicon)  # a bad lexicon file is refused before anything is written
    if output.resolve() == labels.resolve():
        from medlens.core.errors import SpecError

        raise SpecError(f"--output {output}: that is the labels file itself")
    if draft_with is not None or distractors_from is not None:
        from medlens.cli.build_draft import DraftStep, draft_step

        unused = (("--template", template != "none"), ("--confusable", confusable),
                  ("--lint", lint), ("--strict", strict),
                  ("--strict-pool", strict_pool), ("--lexicon", lexicon))  # fmt: skip
        step = DraftStep(labels, images, output, granularity, task, options, question, force,
                         draft_with, dimensions, draft_templates, distractors_from, candidates,
                         annotators, tuple(flag for flag, given in unused if given))  # fmt: skip
        return draft_step(step)
    fmt = output_format(output)
    note = claim_output(output, force)
    settings = BuildOptions(
        granularity=granularity,
        task=task,
        options=options,
        templates=parse_templates(template),
        seed=seed,
        question=question,
        confusable=frozenset(read_confusable(confusable)) if confusable else frozenset(),
        lint=lint_words(lint) if lint else (),
        lexicon=words,
        strict=strict,
        strict_pool=strict_pool,
    )
    settings.check()
    if fmt == "tsv" and options == 0:
        from medlens.core.errors import SpecError

        raise SpecError("--options 0 makes open items: a TSV holds multiple-choice items (.jsonl)")
    built = LabelledBuild(read_labels(labels, images), settings)
    bar = progress_bar("medlens build", unit="labels")
    progress = bar.add_task("building", total=len(built.groups))

    def on_group() -> None:
        if not bar.live.is_started:  # after the labels were read: input errors stay one line
            bar.start()
        bar.advance(progress)

    built.on_group = on_group
    try:
        count = write_built(built, output, fmt)
    except BaseException:
        bar.live.transient = True  # a refusal (--strict, a bad row met late) stays one line
        raise
    finally:
        if bar.live.is_started:
            bar.stop()
    for warning in built.warnings:
        err_console.print(f"warning: {warning}", highlight=False, markup=False, soft_wrap=True)
    if summary := built.pools.summary():
        err_console.print(summary, highlight=False, markup=False, soft_wrap=True)
    if note:
        err_console.print(f"note: {note}", highlight=False, markup=False, soft_wrap=True)
    err_console.print(f"wrote {count} items to {output}", highlight=False, soft_wrap=True)


def write_built(built: object, output: Path, fmt: str) -> int:
    from medlens.builder.labelled import LabelledBuild
    from medlens.builder.output import write_benchmark, write_jsonl, write_tsv
    from medlens.builder.questions import LETTERS

    assert isinstance(built, LabelledBuild)
    letters = LETTERS[: built.options.options]
    meta = [k for k in dict.fromkeys(built.meta_keys()) if k not in ("split", "image_id")]

    def write(staged: Path, staged_images: Path) -> int:
        if fmt == "jsonl":
            return write_jsonl(built.entries(), staged, staged_images)
        return write_tsv(built.entries(), staged, meta, letters)

    return write_benchmark(output, write)
