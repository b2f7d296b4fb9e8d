"""`medlens reading explain`: why two readings of the same outputs give different scores."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from medlens.cli.common import command, console
from medlens.cli.groups import reading_app
from medlens.core.terminal import terminal_safe, terminal_safe_json

SHOWN_GROUPS = 20


@command("explain", under=reading_app)
def explain(
    run: Annotated[Path, typer.Argument(help="Run directory")],
    against: Annotated[
        str,
        typer.Option(
            "--against",
            help="A reading mode (medlens, vlmeval, lmms-eval, evalscope, medevalkit, "
            "multimedeval) or another run of the same benchmark",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on stdout")] = False,
) -> None:
    """Score RUN under its reading and another; list the items whose verdicts differ, grouped
    by the rules that decided them, and attribute the score gap to the groups."""
    from medlens.analysis.explain import explain_run

    result = explain_run(run, against)
    if as_json:
        sys.stdout.write(terminal_safe_json(json.dumps(result, ensure_ascii=False)) + "\n")
        return
    for line in explain_lines(result):
        console.print(terminal_safe(line), markup=False, highlight=False, soft_wrap=True)


def explain_lines(result: dict[str, Any]) -> list[str]:
    """The explanation as plain lines: the two scores and the gap, then one line per group."""
    n = result["n"]
    if not n:
        return [f"{result['run']}: no scored items to compare"]
    lines = [
        f"{result['run']}: {result['reading']} {result['score']:.3f} vs {result['against']} "
        f"{result['against_score']:.3f} over {n} items: gap {result['gap']:+.3f} "
        f"({result['gap'] * n:+.1f} items net); verdicts differ on {result['differing']} items"
    ]
    for group in result["groups"][:SHOWN_GROUPS]:
        example = group["examples"][0]
        output = str(example["output"] or "")[:80].replace("\n", " ")
        lines.append(
            f"  {group['contribution']:+.3f} ({group['net_items']:+.1f} items) "
            f"{group['rule']} vs {group['against_rule']}: {group['n']} items, "
            f"e.g. {example['id']} {output!r}: {example['answer']!r} ({example['score']:g}) vs "
            f"{example['against_answer']!r} ({example['against_score']:g})"
        )
    hidden = result["groups"][SHOWN_GROUPS:]
    if hidden:
        rest = sum(group["contribution"] for group in hidden)
        lines.append(f"  {rest:+.3f} in {len(hidden)} more groups (see --json)")
    for departure in result.get("departures", []):
        lines.append(f"  {result['against']} mode departs from the peer: {departure}")
    return lines
