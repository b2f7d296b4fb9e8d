"""The builder's steps that need a model and a human, with files in between.

``medlens build LABELS --draft-with SPEC --output review.xlsx`` (drafted questions to review) and
``medlens build LABELS --distractors-from A,B,C --output picks.xlsx`` (distractor candidates to
pick from) write a sheet and its draft record (``<sheet>.draft.json``);
``medlens build-from-review`` and ``medlens build-from-picks`` turn the filled sheets into a
benchmark. The sheets are ``ratings`` sheets (xlsx with an instructions sheet, or csv).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from medlens.cli.common import command, err_console, progress_bar
from medlens.cli.groups import build_app

if TYPE_CHECKING:
    from medlens.builder.labels import LabelsFile
    from medlens.builder.model_calls import Prompt, Reply
    from medlens.builder.reviewed import Question, SheetContent
    from medlens.core.specs import Spec

RECORD_SUFFIX = ".draft.json"


def record_path(sheet: Path) -> Path:
    """The draft record kept beside a sheet: ``<sheet stem>.draft.json``."""
    return sheet.with_name(sheet.stem + RECORD_SUFFIX)


def say(text: str) -> None:
    err_console.print(text, highlight=False, markup=False, soft_wrap=True)


def check_sheet_output(output: Path, force: bool) -> None:
    """A sheet output: .xlsx/.csv in an existing folder; its files replaced only with --force."""
    from medlens.builder.reviewed import pictures_folder
    from medlens.core.errors import SpecError
    from medlens.ratings.sheets import check_output

    check_output(output)
    for path in (output, record_path(output), pictures_folder(output)):
        if path.exists() and not force:
            raise SpecError(f"--output {output}: {path} exists; give --force to replace it")


def check_image_level(granularity: str, task: str, flag: str) -> None:
    from medlens.core.errors import SpecError

    if granularity != "image" or task != "classify":
        raise SpecError(f"{flag} drafts image-level questions: use --granularity image "
                        "--task classify")  # fmt: skip


def ask_model(spec: Spec, prompts: Sequence[Prompt], what: str) -> tuple[str, list[Reply]]:
    """Every prompt to one model under a progress bar; a model that answered none is refused."""
    from medlens.builder.model_calls import ask_all, open_model
    from medlens.core.errors import MedlensError

    model = open_model(spec)
    name = model.spec
    bar = progress_bar(f"medlens build ({what})", unit="requests")
    task = bar.add_task(str(spec), total=len(prompts))
    bar.live.transient = True  # the summary says what was done; a refusal stays one line
    if err_console.is_terminal:  # in a log or pipe the bar would leave a blank line
        bar.start()
    try:
        replies = ask_all(model, prompts, lambda reply: bar.advance(task))
    finally:
        if bar.live.is_started:
            bar.stop()
    failed = [r for r in replies if r.error is not None]
    if replies and len(failed) == len(replies):
        raise MedlensError(f"{spec}: no request was answered ({failed[0].error}); nothing written")
    cached = sum(r.cached for r in replies)
    if cached:
        say(f"{cached} of {len(replies)} answers of {name} came from the response cache")
    return name, replies


@contextlib.contextmanager
def sheet_output(output: Path, labels: LabelsFile) -> Iterator[SheetOutput]:
    """Every picture of the labels rendered into a staging folder first (an unreadable image
    is refused before any request is paid for); `SheetOutput.finish` then moves them into
    place beside the sheet and writes the record and the sheet. A refusal leaves nothing."""
    from medlens.builder.output import staged_folder
    from medlens.builder.reviewed import picture_names, picture_png, pictures_folder

    rows = [{"image": r.image, "image_path": str(r.image_path), "where": r.where}
            for r in labels.rows]  # fmt: skip
    where = {row["image_path"]: row["where"] for row in reversed(rows)}
    names = picture_names(rows, output)
    with staged_folder(output.parent) as staging:
        (staging / pictures_folder(output).name).mkdir()
        for image_path, name in names.items():
            (staging / name).write_bytes(
                picture_png(image_path, str(labels.path), where[image_path])
            )
        yield SheetOutput(output, staging, names)


@dataclass(frozen=True)
class SheetOutput:
    output: Path
    staging: Path
    pictures: dict[str, str]
    """Source image path → the sheet-relative name of its PNG."""

    def finish(self, sheet: SheetContent, record: dict[str, Any]) -> None:
        from medlens.builder.output import replace_path
        from medlens.builder.reviewed import pictures_folder, record_bytes
        from medlens.ratings.sheets import Sheet, sheet_bytes, write_bytes_atomic

        table = Sheet(sheet.header, sheet.rows, sheet.instructions, sheet.choices)
        contents = sheet_bytes(table, self.output.suffix.lower())
        folder = pictures_folder(self.output)
        replace_path(self.staging / folder.name, folder)
        write_bytes_atomic(record_path(self.output), record_bytes(record))
        for extra, content in contents.items():
            target = self.output.with_name(self.output.stem + extra) if extra else self.output
            write_bytes_atomic(target, content)


@dataclass(frozen=True)
class DraftStep:
    """The ``build`` options a drafting step reads."""

    labels: Path
    images: Path | None
    output: Path
    granularity: str
    task: str
    options: int
    question: str | None
    force: bool
    draft_with: str | None
    dimensions: str | None
    draft_templates: Path | None
    distractors_from: str | None
    candidates: int
    annotators: int
    unused: tuple[str, ...] = ()
    """Options of the one-step build given with a drafting step (refused: they would do nothing)."""


def draft_step(step: DraftStep) -> None:
    """``build --draft-with`` or ``build --distractors-from`` (not both at once)."""
    from medlens.core.errors import SpecError

    if step.draft_with is not None and step.distractors_from is not None:
        raise SpecError("--draft-with and --distractors-from are two steps: give one of them")
    flag = "--draft-with" if step.draft_with is not None else "--distractors-from"
    if step.unused:
        raise SpecError(f"{flag} writes a sheet to fill: {', '.join(step.unused)} would do "
                        "nothing there (leave it out)")  # fmt: skip
    check_image_level(step.granularity, step.task, flag)
    if step.draft_with is not None:
        draft_review(step.labels, step.images, step.output, step.draft_with, step.options,
                     step.dimensions, step.draft_templates, step.force)  # fmt: skip
    else:
        assert step.distractors_from is not None
        draft_picks(step.labels, step.images, step.output, step.distractors_from,
                    step.candidates, step.options, step.annotators, step.question,
                    step.force)  # fmt: skip


def draft_review(
    labels: Path, images: Path | None, output: Path, spec_text: str, options: int,
    dimensions: str | None, templates_file: Path | None, force: bool,
) -> None:  # fmt: skip
    """``build LABELS --draft-with SPEC``: the review sheet of drafted questions."""
    from medlens.builder.drafting import (
        choose_dimensions,
        draft_prompt,
        draft_tasks,
        load_templates,
    )
    from medlens.builder.labels import read_labels
    from medlens.builder.review import draft_record, review_sheet
    from medlens.core.errors import SpecError
    from medlens.core.specs import parse_spec

    if not 2 <= options <= 10:
        raise SpecError(f"--options {options}: a drafted question has 2 to 10 options")
    check_sheet_output(output, force)
    spec = parse_spec(spec_text)
    templates = load_templates(templates_file)
    chosen = choose_dimensions(templates, dimensions)
    read = read_labels(labels, images)
    tasks = draft_tasks(read.rows, chosen)
    prompts = [draft_prompt(task, options) for task in tasks]
    with sheet_output(output, read) as out:
        model, replies = ask_model(spec, prompts, "drafting")
        record = draft_record(tasks, replies, model, templates, options, labels)
        out.finish(review_sheet(record, out.pictures), record)
    unusable = sum(bool(r["problem"]) for r in record["rows"])
    say(f"wrote {output}: {len(tasks)} drafted questions by {model} ({unusable} unusable, marked "
        f"reject with their problem); draft record {record_path(output)}")  # fmt: skip


def distractor_specs(text: str) -> list[Spec]:
    """The comma-separated model specs of ``--distractors-from``, each model once."""
    import re

    from medlens.core.errors import SpecError
    from medlens.core.specs import parse_spec
    from medlens.models import model_identity

    # a comma starts the next spec only before ``name:`` (an option value may hold commas)
    specs = [parse_spec(t) for t in re.split(r",(?=\s*[A-Za-z][\w-]*:)", text) if t.strip()]
    if not specs:
        raise SpecError("--distractors-from: give one or more model specs, comma-separated")
    names = [model_identity(s) for s in specs]
    if twice := next((n for i, n in enumerate(names) if n in names[:i]), None):
        raise SpecError(f"--distractors-from names the model {twice} twice (give each model once)")
    return specs


def draft_picks(
    labels: Path, images: Path | None, output: Path, specs_text: str, candidates: int,
    options: int, annotators: int, question: str | None, force: bool,
) -> None:  # fmt: skip
    """``build LABELS --distractors-from A,B,C``: the annotators' pick sheet."""
    from medlens.builder.candidates import candidates_prompt, pick_tasks, picks_record
    from medlens.builder.labels import read_labels
    from medlens.builder.picks import pick_sheet
    from medlens.builder.wording import stem
    from medlens.core.errors import SpecError

    specs = distractor_specs(specs_text)
    if candidates < 1 or not 2 <= options <= 10 or annotators < 1:
        raise SpecError(f"--candidates {candidates} --options {options} --annotators "
                        f"{annotators}: expected ≥ 1, 2 to 10 and ≥ 1")  # fmt: skip
    check_sheet_output(output, force)
    text = stem("image", "classify", False, True, "", question)
    read = read_labels(labels, images)
    tasks = pick_tasks(read.rows, text)
    prompts = [candidates_prompt(task, candidates) for task in tasks]
    replies: dict[str, list[Reply]] = {}
    with sheet_output(output, read) as out:
        for spec in specs:
            name, replies[name] = ask_model(spec, prompts, "distractor candidates")
        record = picks_record(tasks, replies, candidates, options, annotators, labels)
        out.finish(pick_sheet(record, out.pictures), record)
    say(
        f"wrote {output}: {len(record['rows'])} items with candidates from {len(specs)} models; "
        f"draft record {record_path(output)}"
    )
    for left in record["left_out"][:5]:
        say(f"warning: {labels}, {left['where']}: left out ({left['reason']})")
    if len(record["left_out"]) > 5:
        say(f"warning: {len(record['left_out'])} label rows left out in all")


def write_questions(
    questions: Sequence[Question], source: Path, output: Path, seed: int, force: bool
) -> int:
    """The reviewed questions as a benchmark (jsonl + images, or a VLMEvalKit TSV)."""
    from medlens.builder.output import (
        claim_output,
        output_format,
        tsv_columns,
        write_benchmark,
        write_jsonl,
        write_tsv,
    )
    from medlens.builder.questions import LETTERS
    from medlens.builder.reviewed import ItemMaker

    fmt = output_format(output)
    claim_output(output, force)
    maker = ItemMaker(seed)
    letters = LETTERS[: max(len(q.wrong) + 1 for q in questions)]
    meta = tsv_columns([*(k for q in questions for k in q.meta), "granularity", "answer_type"])

    def write(staged: Path, staged_images: Path) -> int:
        entries = maker.entries(questions, source)
        if fmt == "jsonl":
            return write_jsonl(entries, staged, staged_images)
        return write_tsv(entries, staged, meta, letters)

    return write_benchmark(output, write)


OUTPUT_HELP = "OUT.jsonl (images in OUT_images/) or OUT.tsv"
DRAFT_HELP = "The draft record (default: <sheet>.draft.json beside the sheet)"


@command(
    "from-review", under=build_app, help="Items from the accepted rows of a filled review sheet."
)
def build_from_review(
    sheet: Annotated[Path, typer.Argument(help="The filled review sheet (.xlsx or .csv)")],
    output: Annotated[Path, typer.Option("--output", help=OUTPUT_HELP)],
    draft: Annotated[Path | None, typer.Option("--draft", help=DRAFT_HELP)] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the option order")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
) -> None:
    """Accepted and edited rows → choice items whose meta names the drafting model, reviewer."""
    from medlens.builder.review import reviewed_questions
    from medlens.builder.reviewed import read_record
    from medlens.ratings.sheets import read_sheet

    draft = draft or record_path(sheet)
    record = read_record(draft, "review")
    questions = reviewed_questions(read_sheet(sheet), record, draft)
    count = write_questions(questions, sheet, output, seed, force)
    edited = sum(q.meta["review"] == "edited" for q in questions)
    say(
        f"wrote {count} items to {output} ({edited} edited by their reviewer; "
        f"{len(record['rows']) - count} of {len(record['rows'])} drafted rows left out)"
    )


@command(
    "from-picks", under=build_app, help="Items whose distractors are the annotators' most-picked."
)
def build_from_picks(
    sheets: Annotated[list[Path], typer.Argument(help="Filled pick sheet(s), .xlsx or .csv")],
    output: Annotated[Path, typer.Option("--output", help=OUTPUT_HELP)],
    draft: Annotated[Path | None, typer.Option("--draft", help=DRAFT_HELP)] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of tie breaks and option order")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
) -> None:
    """Each item's distractors are its most-picked candidates (ties broken by --seed)."""
    from medlens.builder.picks import picked_questions, read_picks
    from medlens.builder.reviewed import read_record
    from medlens.ratings.sheets import read_sheet

    draft = draft or record_path(sheets[0])
    record = read_record(draft, "picks")
    picks = read_picks([read_sheet(s) for s in sheets], record, draft)
    questions = picked_questions(picks, record, sheets[0], seed)
    count = write_questions(questions, sheets[0], output, seed, force)
    ties = sum(q.meta["pick_tie_broken_by_seed"] == "yes" for q in questions)
    say(
        f"wrote {count} items to {output} from the picks of {len(picks)} annotators "
        f"({ties} with a tie broken by the seed; {len(record['rows']) - count} of "
        f"{len(record['rows'])} items without picks left out)"
    )
