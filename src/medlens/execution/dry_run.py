"""`medlens run --dry-run`: what a run would send, without calling the model.

`plan_run` does every check `run` does before its first request (specs, files, extras, another
spec in the run directory) and touches nothing on disk; `planned_prompts` gives the exact prompt
text of each item, so other planning commands (a price estimate) can count what would be sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.items import ImageRef, Item
from medlens.execution.dispatch import dispatch_order
from medlens.execution.options import RunOptions, run_dir_of
from medlens.execution.preparation import LoadedBenchmark, prepare
from medlens.execution.requests import RunSettings, prompt_text
from medlens.runs.layout import is_run
from medlens.runs.store import RunStore, check_same_spec


@dataclass(frozen=True)
class PlannedPrompt:
    """One request as it would be sent: its item, prompt text and image references."""

    item: Item
    text: str
    images: tuple[str, ...]
    """The item's own images, named (every image sent, exemplars' too, is in `sent_images`)."""
    inline: bool = False
    """The text already names every image where it is sent (few-shot: after the exemplars)."""
    sent_images: int = 0
    """Images the whole request carries (for a cost estimate)."""


@dataclass(frozen=True)
class RunPlan:
    run_dir: Path
    model_spec: str
    selected: int
    """Items the run covers (after --limit)."""
    todo: list[Item]
    """Items that would be sent (not answered yet in an existing run)."""
    settings: RunSettings
    """Prompt style and strategy (with the few-shot exemplars) the requests would use."""
    notes: tuple[str, ...]
    spec: dict[str, Any] = field(default_factory=dict)
    """The spec the run records in run.json (benchmark fingerprint, selection, reading)."""


def plan_run(
    options: RunOptions, loaded: LoadedBenchmark | None = None, adaptive: bool = False
) -> RunPlan:
    """Check everything a run checks and list the items it would send; writes nothing.

    `loaded`: the benchmark already loaded (see :func:`medlens.execution.evaluate.prepare`).
    `adaptive`: the run will be adaptive; its planner's part of the spec (``adaptive``) is
    checked when it starts (its baseline may not exist yet), and every item not answered is
    counted as one it may send (an upper bound)."""
    spec, items, model, settings, _probe = prepare(options, describe_only=True, loaded=loaded)
    asyncio.run(model.aclose())
    path = run_dir_of(options)
    if adaptive and is_run(path):
        from medlens.runs.view import RunView

        spec["adaptive"] = RunView(path).spec.get("adaptive")
    check_same_spec(path, spec)
    done: set[str] = set()
    if is_run(path):
        done = RunStore.open(path).done_ids(retry_errors=options.retry_errors)
    selected = items if options.limit is None else items[: options.limit]
    todo = dispatch_order([item for item in selected if item.id not in done], options.order)
    notes = tuple(getattr(model, "notes", ()))
    return RunPlan(path, model.spec, len(selected), todo, settings, notes, spec)


def planned_prompts(items: Iterable[Item], settings: RunSettings) -> Iterator[PlannedPrompt]:
    """The prompt of each item as `settings` would send it (images named, not read)."""
    for item in items:
        images = tuple(describe_image(image) for image in item.images)
        shots = settings.exemplars.for_item(item) if settings.exemplars is not None else ()
        sent = len(images) + sum(len(exemplar.images) for exemplar in shots)
        inline = settings.exemplars is not None
        yield PlannedPrompt(item, conversation_text(item, settings), images, inline, sent)


def conversation_text(item: Item, settings: RunSettings) -> str:
    """Every text turn sent for `item`: few-shot exemplars as solved turns, then the item.

    Zero-shot, this is exactly the item's prompt text."""
    if settings.exemplars is None:
        return prompt_text(item, settings)
    from medlens.execution.exemplars import answer_turn

    turns = []
    for number, exemplar in enumerate(settings.exemplars.for_item(item), start=1):
        images = "".join(f"[image] {describe_image(i)}\n" for i in exemplar.images)
        origin = f"{exemplar.meta['split']} " if exemplar.meta.get("split") else ""
        turns.append(f"[exemplar {number} ({origin}{exemplar.id}): user]\n{images}")
        turns.append(prompt_text(exemplar, settings))
        turns.append(
            f"[exemplar {number}: assistant]\n{answer_turn(exemplar, settings.strategy.cot)}\n"
        )
    images = "".join(f"[image] {describe_image(i)}\n" for i in item.images)
    turns.append(f"[item {item.id}: user]\n{images}{prompt_text(item, settings)}")
    return "".join(turns)


def describe_image(image: ImageRef) -> str:
    """Where an image is read from, as a person would look for it."""
    if image.source == "tsv":
        return f"{image.path} (base64 cell of row index {image.name})"
    if image.source in ("parquet", "arrow"):
        return f"{image.path} (row {image.offset}, column {image.entry}: {image.name})"
    if image.source == "zip":
        return f"{image.path} (member {image.entry})"
    if image.source == "volume":
        return f"{image.path} (slice {image.offset}, {image.entry})"
    return image.path or image.name or f"<{image.source} image>"
