"""The ``medlens`` command line: a thin typer app over the library; parses every spec once.

Each command lives in its own module under ``medlens.cli`` and registers itself on import.
Imports anything; nothing imports it."""

from __future__ import annotations

import importlib

from medlens.cli.common import app, flush_stdout_quietly

COMMAND_MODULES: tuple[str, ...] = (
    "medlens.cli.listing",
    "medlens.cli.run",
    "medlens.cli.report",
    "medlens.cli.slice",
    "medlens.cli.compare",
    "medlens.cli.explain",
    "medlens.cli.chexpert",
    "medlens.cli.subgroups",
    "medlens.cli.overlap",
    "medlens.cli.export",
    "medlens.cli.check",
    "medlens.cli.audit",
    "medlens.cli.extract",
    "medlens.cli.vocab",
    "medlens.cli.judge",
    "medlens.cli.ratings",
    "medlens.cli.agreement",
    "medlens.cli.board",
    "medlens.cli.build",
    "medlens.cli.build_draft",
    "medlens.cli.calibrate",
    "medlens.cli.subset",
    "medlens.cli.unpack",
    "medlens.cli.cost",
    "medlens.cli.runs",
    "medlens.cli.study",
    "medlens.cli.view",
    "medlens.cli.items",
    "medlens.cli.estimate",
    "medlens.cli.gate",
    "medlens.cli.fetch",
)

for _module in COMMAND_MODULES:
    importlib.import_module(_module)


def main() -> None:
    """Console-script entry point."""
    try:
        app()
    finally:
        flush_stdout_quietly()


__all__ = ["app", "main"]
