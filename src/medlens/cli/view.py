"""`medlens view`: browse every item of runs (with images), side by side, in a local web page."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from medlens.cli.common import command, err_console
from medlens.report.viewer.links import DEFAULT_PORT

HELP = "Browse every item of runs with its images, answers and verdicts in a local web viewer."


@command(
    "view", short_help="Browse runs' items with images and answers in a web viewer.", help=HELP
)
def view(
    runs: Annotated[
        list[Path], typer.Argument(help="Run directories, or folders with runs below them")
    ],
    port: Annotated[
        int, typer.Option("--port", help="Port on 127.0.0.1 (0: any free port)")
    ] = DEFAULT_PORT,
) -> None:
    """Serve a read-only viewer on 127.0.0.1 until Ctrl-C; the HTML report links to it."""
    from medlens.core.extras import require_feature

    require_feature("medlens view", "viewer")
    from medlens.report.viewer.catalog import load_catalog
    from medlens.report.viewer.serve import bind, serve

    bind(port).close()  # a busy port fails before the runs are read
    groups = load_catalog(runs)
    n_runs = sum(len(group.runs) for group in groups)
    n_items = sum(len(group.rows) for group in groups)

    def ready(url: str) -> None:
        print(f"medlens view: {url}", flush=True)
        err_console.print(
            f"{n_runs} run(s), {n_items:,} items in {len(groups)} benchmark(s); read-only, "
            "on this machine only; Ctrl-C stops",
            highlight=False,
        )

    try:
        serve(groups, port, ready)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
