"""`medlens run --dry-run`: what a run would send, without calling the model.

`plan_run` does every check `run` does before its first request (specs, files, extras, another
spec in the run directory) and touches nothing on disk; `planned_prompts` gives the exact prompt
text of each item, so other planning commands (a price estimate) can count what would be sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from medlens.evaluate import RunOptions, prepare, run_dir_of
from medlens.items import ImageRef, Item
from medlens.prompts import build_prompt
from medlens.store import RunStore, check_same_spec


@dataclass(frozen=True)
class PlannedPrompt:
    """One request as it would be sent: its item, prompt text and image references."""

    item: Item
    text: str
    images: tuple[str, ...]


@dataclass(frozen=True)
class RunPlan:
    run_dir: Path
    model_spec: str
    selected: int
    """Items the run covers (after --limit)."""
    todo: list[Item]
    """Items that would be sent (not answered yet in an existing run)."""
    prompt_style: str
    notes: tuple[str, ...]


def plan_run(options: RunOptions) -> RunPlan:
    """Check everything a run checks and list the items it would send; writes nothing."""
    spec, items, model, settings, _probe = prepare(options, describe_only=True)
    asyncio.run(model.aclose())
    path = run_dir_of(options)
    check_same_spec(path, spec)
    done: set[str] = set()
    if (path / "run.json").is_file():
        done = RunStore.open(path).done_ids(retry_errors=options.retry_errors)
    selected = items if options.limit is None else items[: options.limit]
    todo = [item for item in selected if item.id not in done]
    notes = tuple(getattr(model, "notes", ()))
    return RunPlan(path, model.spec, len(selected), todo, settings.prompt, notes)


def planned_prompts(items: Iterable[Item], prompt_style: str) -> Iterator[PlannedPrompt]:
    """The prompt text of each item in `prompt_style` (images named, not read)."""
    for item in items:
        images = tuple(describe_image(image) for image in item.images)
        yield PlannedPrompt(item, build_prompt(item, prompt_style), images)


def describe_image(image: ImageRef) -> str:
    """Where an image is read from, as a person would look for it."""
    if image.source == "tsv":
        return f"{image.path} (base64 cell of row index {image.name})"
    return image.path or image.name or f"<{image.source} image>"
