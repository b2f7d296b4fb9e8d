"""`medlens reading vocab [AXIS]`: the vocabularies answers are read with (``extract.vocabulary``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from medlens.cli.common import command, console
from medlens.cli.groups import reading_app


@command("vocab", under=reading_app)
def vocab(
    axis: Annotated[
        str | None, typer.Argument(help="One axis (modality, plane, …); all axes when omitted")
    ] = None,
    extra: Annotated[
        list[Path] | None,
        typer.Option("--vocab", help="Also a vocabulary file of yours (checked as run reads it)"),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
) -> None:
    """List the vocabularies (axis, version, entries) or one axis's entries with their sources."""
    from medlens.core.errors import SpecError
    from medlens.extract.vocabulary import load_vocabulary

    vocabulary = load_vocabulary(tuple(str(path) for path in extra or ()))
    axes = sorted({file.axis for file in vocabulary.files})
    if axis is not None and axis not in axes:
        raise SpecError(f"no vocabulary {axis!r} (known: {', '.join(axes)})")
    if axis is None:
        rows: list[dict[str, Any]] = [
            {
                "axis": f.axis,
                "relation": f.relation,
                "version": f.version,
                "entries": len(f.entries),
                "file": f.path,
            }
            for f in vocabulary.files
        ]
    else:
        rows = [
            {
                "canonical": e.canonical,
                "term": e.term,
                "relation": e.relation,
                "source": e.source,
                "where": e.where,
            }
            for e in vocabulary.entries(axis)
        ]
    if as_json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    title = f"vocabulary {axis}" if axis else "vocabularies (medlens reading vocab AXIS lists one)"
    table = Table(title=title, title_justify="left")
    for key in rows[0] if rows else ("axis",):
        table.add_column(key, overflow="fold")
    for row in rows:
        table.add_row(*(str(value) for value in row.values()))
    console.print(table)
