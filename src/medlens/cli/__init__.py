"""The ``medlens`` command line: a thin typer app over the library; parses every spec once.

Each command lives in its own module under ``medlens.cli`` and registers itself on import, at
the top level or in its group (``medlens.cli.groups``); old names are aliases
(``medlens.cli.aliases``).
Imports anything; nothing imports it."""

from __future__ import annotations

import importlib

from medlens.cli.common import app, flush_stdout_quietly

COMMAND_MODULES: tuple[str, ...] = (
    # the top-level commands in the order `medlens --help` lists them: a first evaluation,
    # reading its results, judging, studies, then what is there to run on
    "medlens.cli.run",
    "medlens.cli.report",
    "medlens.cli.runs",
    "medlens.cli.view",
    "medlens.cli.slice",
    "medlens.cli.compare",
    "medlens.cli.board",
    "medlens.cli.subgroups",
    "medlens.cli.chexpert",
    "medlens.cli.calibrate",
    "medlens.cli.cost",
    "medlens.cli.export",
    "medlens.cli.judge",
    "medlens.cli.agreement",
    "medlens.cli.study",
    "medlens.cli.listing",
    "medlens.cli.fetch",
    # the groups (listed after the commands, in this order) and their commands
    "medlens.cli.groups",
    "medlens.cli.build",
    "medlens.cli.build_draft",
    "medlens.cli.subset",
    "medlens.cli.unpack",
    "medlens.cli.check",
    "medlens.cli.audit",
    "medlens.cli.overlap",
    "medlens.cli.extract",
    "medlens.cli.vocab",
    "medlens.cli.explain",
    "medlens.cli.ratings",
    "medlens.cli.items",
    "medlens.cli.estimate",
    "medlens.cli.gate",
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
