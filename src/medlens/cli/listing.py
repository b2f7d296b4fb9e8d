"""`medlens benchmarks` and `medlens models`: what can be named in a spec."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from medlens.cli.common import command, console
from medlens.core.registry import Registry


def _print_registry(registry: Registry, title: str) -> None:
    table = Table(title=title, title_justify="left")
    table.add_column("name")
    table.add_column("spec syntax", overflow="fold")
    table.add_column("what it is", overflow="fold")
    for entry in registry:
        table.add_row(entry.name, entry.syntax, entry.summary)
    console.print(table)


@command("benchmarks")
def benchmarks(
    as_json: Annotated[
        bool, typer.Option("--json", help="name, spec, description, licence, access, citation")
    ] = False,
) -> None:
    """List benchmark loaders and their spec syntax (--json adds licence, access and citation)."""
    from medlens.sources import SOURCES

    if as_json:
        import json

        from medlens.sources.cards import benchmark_listing

        print(json.dumps(benchmark_listing(), indent=2, ensure_ascii=False))
        return
    _print_registry(SOURCES, "benchmarks (--bench SPEC)")
    _print_hfds_presets()


def _print_hfds_presets() -> None:
    """The hfds: presets: which repo ids choose them, and whether they equal the native loader."""
    from medlens.sources.hfds_presets import PRESETS

    table = Table(title="hfds: presets (chosen by repo id, or ?preset=NAME)", title_justify="left")
    table.add_column("preset")
    table.add_column("repo ids", overflow="fold")
    table.add_column("layout", overflow="fold")
    table.add_column("same as the native loader?", overflow="fold")
    for preset in PRESETS.values():
        table.add_row(preset.name, ", ".join(preset.repos) or "-", preset.summary, preset.parity)
    console.print(table)


@command("models")
def models() -> None:
    """List model backends and their spec syntax."""
    from medlens.models import MODELS

    _print_registry(MODELS, "models (--model SPEC)")
