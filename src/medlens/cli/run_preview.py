"""What `medlens run --dry-run` prints: the run it would make and its first prompts."""

from __future__ import annotations

from itertools import islice
from typing import TYPE_CHECKING

from rich.text import Text

from medlens.cli.common import console, err_console

if TYPE_CHECKING:
    from medlens.analysis.cost import Price
    from medlens.execution.dry_run import RunPlan
    from medlens.execution.evaluate import RunOptions

SHOWN_PROMPTS = 3


def print_dry_run(options: RunOptions, price_text: str | None = None) -> None:
    """Item counts, then the first prompts exactly as they would be sent (and, with a price,
    the estimated cost of sending every remaining one)."""
    from medlens.analysis.cost import parse_price
    from medlens.execution.dry_run import plan_run, planned_prompts

    price = parse_price(price_text) if price_text is not None else None  # before any work
    plan = plan_run(options)
    for note in plan.notes:
        err_console.print(Text(f"note: {note}"), soft_wrap=True)
    console.print(
        Text(
            f"dry run: {plan.run_dir} × {plan.model_spec}: {plan.selected} items, "
            f"{len(plan.todo)} to send ({plan.selected - len(plan.todo)} already answered)"
            f"{requests_note(plan)}; no model was called"
        ),
        soft_wrap=True,
    )
    for prompt in islice(planned_prompts(plan.todo, plan.settings), SHOWN_PROMPTS):
        console.print(Text(f"--- item {prompt.item.id} ({prompt.item.kind})"))
        for image in () if prompt.inline else prompt.images:  # few-shot: named in its turn
            console.print(Text(f"[image] {image}"), soft_wrap=True)
        console.print(Text(prompt.text.rstrip("\n")), soft_wrap=True)
    if plan.settings.strategy.refine:
        from medlens.execution.refinement import REFINE_INSTRUCTION

        instruction = REFINE_INSTRUCTION.format(k=plan.settings.strategy.refine)
        console.print(Text(f"--- then, per item, the refining request: the prompt above + "
                           f"<path 1>…</path {plan.settings.strategy.refine}> + {instruction!r}"),
                      soft_wrap=True)  # fmt: skip
    if price is not None:
        print_estimate(plan, price)


def requests_note(plan: RunPlan) -> str:
    """``, N requests (K per item: …)`` when a strategy sends more than one request per item."""
    strategy = plan.settings.strategy
    calls = strategy.requests_per_item
    if calls == 1:
        return ""
    how = (f"{strategy.refine} reasoning paths + 1 refining request" if strategy.refine
           else f"{calls} self-consistency draws")  # fmt: skip
    return f", {len(plan.todo) * calls:,} requests ({calls} per item: {how})"


def print_estimate(plan: RunPlan, price: Price) -> None:
    """The cost of the prompts still to send, from characters, images and max_tokens."""
    from medlens.analysis.cost import TOKENS_PER_IMAGE, estimate_prompt_cost, strategy_estimate
    from medlens.execution.dry_run import planned_prompts

    prompts = list(planned_prompts(plan.todo, plan.settings))
    estimate = estimate_prompt_cost(
        (p.text for p in prompts),
        price,
        output_tokens_per_item=output_tokens_per_item(plan.model_spec, plan.settings.strategy.cot),
        tokens_per_image=TOKENS_PER_IMAGE,
        images_per_prompt=[p.sent_images for p in prompts],
    )
    strategy = plan.settings.strategy
    calls = strategy.requests_per_item
    estimate = strategy_estimate(estimate, calls, strategy.refine)
    tokens, assumed = estimate["tokens"], estimate["assumptions"]
    console.print(
        Text(
            f"estimated cost of {estimate['items']} items: "
            f"${price.of(tokens['input'], tokens['output']):.4f} "
            f"(input ≈ {tokens['input']:,.0f} tokens, output ≈ "
            f"{tokens['output']:,.0f}; assumed {assumed['chars_per_token']:g} "
            f"characters per token, {assumed['tokens_per_image']:g} tokens per image, "
            f"{assumed['output_tokens_per_item']:g} output tokens per answer"
            + (" (a reasoning answer)" if plan.settings.strategy.cot else "")
            + (f", {strategy.samples} draws per item" if strategy.samples > 1 else "")
            + (
                f", {calls} requests per item ({strategy.refine} reasoning paths and one "
                "refining request that reads them)"
                if strategy.refine
                else ""
            )
            + "; not a tokenizer count)"
        ),
        soft_wrap=True,
    )


def output_tokens_per_item(model_spec: str, reasoning: bool = False) -> float:
    """The model spec's ``max_tokens`` (an upper bound of each answer), else 64 (512 when the
    strategy asks for reasoning): ``analysis.cost.answer_tokens``."""
    from medlens.analysis.cost import answer_tokens
    from medlens.core.specs import parse_spec

    return answer_tokens(parse_spec(model_spec).option("max_tokens"), reasoning)
