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


@command("benchmarks", short_help="List benchmark loaders and their spec syntax.")
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


@command("models", short_help="List model backends and their spec syntax.")
def models(
    check: Annotated[
        str | None,
        typer.Option(
            "--check",
            metavar="SPEC",
            help="Check hf:DIR before a long run: family, chat template, image token, resolution",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="With --check: one JSON object")] = False,
) -> None:
    """List model backends and their spec syntax (--check SPEC: what a local checkpoint does
    with an image)."""
    from medlens.models import MODELS

    if check is None:
        if as_json:
            from medlens.core.errors import SpecError

            raise SpecError("--json goes with --check SPEC")
        _print_registry(MODELS, "models (--model SPEC)")
        return
    _print_check(check, as_json)


def _print_check(text: str, as_json: bool) -> None:
    import json

    from medlens.core.errors import SpecError
    from medlens.core.extras import check_run_extras
    from medlens.core.specs import parse_spec
    from medlens.models.hf_check import check_hf, check_text

    spec = parse_spec(text)
    if spec.name != "hf":
        raise SpecError(f"--check {text}: only hf:DIR checkpoints can be checked")
    check_run_extras("hf", "local")
    report = check_hf(spec)
    if as_json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return
    for line in check_text(report):
        console.print(line, highlight=False, markup=False, soft_wrap=True)
