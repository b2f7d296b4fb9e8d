"""What `medlens run --dry-run` prints: the run it would make and its first prompts."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from rich.text import Text

from medlens.cli.common import console, err_console

if TYPE_CHECKING:
    from medlens.evaluate import RunOptions

SHOWN_PROMPTS = 3


def print_dry_run(options: RunOptions) -> None:
    """Item counts, then the first prompts exactly as they would be sent."""
    from medlens.dry_run import plan_run, planned_prompts

    plan = plan_run(options)
    for note in plan.notes:
        err_console.print(Text(f"note: {note}"), soft_wrap=True)
    console.print(
        Text(
            f"dry run: {plan.run_dir} × {plan.model_spec}: {plan.selected} items, "
            f"{len(plan.todo)} to send ({plan.selected - len(plan.todo)} already answered); "
            "no model was called"
        ),
        soft_wrap=True,
    )
    for prompt in islice(planned_prompts(plan.todo, plan.prompt_style), SHOWN_PROMPTS):
        console.print(Text(f"--- item {prompt.item.id} ({prompt.item.kind})"))
        for image in prompt.images:
            console.print(Text(f"[image] {image}"), soft_wrap=True)
        console.print(Text(prompt.text.rstrip("\n")), soft_wrap=True)
