"""`medlens build subset`: a frozen, runnable benchmark cut from another one (recipe in subset.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, err_console
from medlens.cli.groups import build_app
from medlens.core.notation import split_list


@command("subset", under=build_app)
def subset(
    spec: Annotated[str, typer.Argument(help="Benchmark spec, e.g. gmai:GMAI_mm_bench_VAL.tsv")],
    output: Annotated[Path, typer.Option("--output", help="OUT.jsonl or OUT.tsv")],
    where: Annotated[
        str | None, typer.Option("--where", help="Filter, as in slice: 'department=Cardiology'")
    ] = None,
    sample: Annotated[int | None, typer.Option("--sample", help="Draw N items")] = None,
    fraction: Annotated[
        float | None, typer.Option("--fraction", help="Draw this share of the items")
    ] = None,
    stratify: Annotated[
        str | None,
        typer.Option("--stratify", help="AXIS[,AXIS]: proportional allocation over these strata"),
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the sample")] = 0,
    include: Annotated[
        Path | None, typer.Option("--include", help="Keep only the ids listed (one per line)")
    ] = None,
    exclude: Annotated[
        Path | None, typer.Option("--exclude", help="Drop the ids listed (one per line)")
    ] = None,
    drop_solved_by: Annotated[
        str | None,
        typer.Option("--drop-solved-by", help="RUN,RUN,...: drop items every run answered right"),
    ] = None,
    drop_flagged: Annotated[
        Path | None,
        typer.Option(
            "--drop-flagged",
            help="AUDIT.json from `medlens check contamination --json` or `medlens items audit --json`",
        ),
    ] = None,
    q: Annotated[
        float,
        typer.Option(
            "--q",
            help="With --drop-flagged and an item audit: drop the flags at this false-discovery "
            "rate (Benjamini–Hochberg q) or below",
        ),
    ] = 0.1,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing output")] = False,
) -> None:
    """Write a subset of a benchmark (ids, metadata and image bytes kept) and its recipe."""
    from medlens.builder.subset import subset as write_subset
    from medlens.core.specs import parse_spec
    from medlens.execution.selection import Recipe, parse_stratify

    recipe = Recipe(
        where=where,
        sample=sample,
        fraction=fraction,
        stratify=parse_stratify(stratify),
        seed=seed,
        include=str(include) if include else None,
        exclude=str(exclude) if exclude else None,
        drop_solved_by=tuple(split_list(drop_solved_by)),
        drop_flagged=str(drop_flagged) if drop_flagged else None,
        flag_q=q,
    )
    content = write_subset(parse_spec(spec), output, recipe, force=force)
    if content.get("note"):
        err_console.print(f"note: {content['note']}", highlight=False, markup=False)
    if drop_flagged:
        err_console.print(_dropped_text(drop_flagged, q), highlight=False, markup=False)
    source = content["source"]
    err_console.print(
        f"wrote {content['n_items']} of {source['n_items']} items to {output} "
        f"(recipe in {output.parent / 'subset.json'})",
        highlight=False,
    )


def _dropped_text(audit: Path, q: float) -> str:
    """How many flagged items --drop-flagged dropped, and for which flags."""
    from collections import Counter

    from medlens.execution.selection import flag_reasons

    reasons = flag_reasons(audit, q)
    counts = Counter(flag for flags in reasons.values() for flag in flags)
    why = ", ".join(f"{flag} {n}" for flag, n in sorted(counts.items()))
    if not reasons:
        return f"dropped no items: none is flagged in {audit} (at q ≤ {q:g} for an item audit)"
    if set(counts) == {"contamination"}:
        return f"dropped {len(reasons)} items flagged in {audit} (contamination audit)"
    return f"dropped {len(reasons)} items flagged at q ≤ {q:g} in {audit}" + (
        f" ({why}; an item may carry several flags)" if why else ""
    )
