"""`medlens build unpack`: a TSV benchmark decoded to image files plus an items.jsonl manifest."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, err_console
from medlens.cli.groups import build_app


@command("unpack", under=build_app)
def unpack(
    spec: Annotated[str, typer.Argument(help="Benchmark spec, e.g. gmai:GMAI_mm_bench_VAL.tsv")],
    output: Annotated[Path, typer.Option("--output", help="New (or empty) folder")],
) -> None:
    """Write DIR/images/* (the bytes as stored) and DIR/items.jsonl (loads with jsonl:)."""
    from medlens.builder.subset import UNPACKED_IMAGES, UNPACKED_ITEMS
    from medlens.builder.unpack import unpack as write_unpacked
    from medlens.core.specs import parse_spec

    count = write_unpacked(parse_spec(spec), output)
    err_console.print(
        f"wrote {count} items to {output / UNPACKED_ITEMS} (images in {output / UNPACKED_IMAGES})",
        highlight=False,
    )
