"""The command groups of ``medlens``: the commands that belong together live under one name.

``medlens --help`` lists what a newcomer starts with and one line per group: ``build …`` makes
benchmarks, ``check …`` checks them, ``reading …`` is how answers are read (``ratings …`` and
``items …`` are made in their modules). The old flat names stay as hidden aliases
(``medlens.cli.aliases``)."""

from __future__ import annotations

import typer

from medlens.cli.aliases import DEFAULTS, DefaultCommandGroup
from medlens.cli.common import app
from medlens.cli.help_format import LiteralHelpGroup


def command_group(name: str, short_help: str, help: str) -> typer.Typer:
    """A group ``medlens NAME …`` whose ``--help`` shows help text as written."""
    group = typer.Typer(
        help=help,
        short_help=short_help,
        no_args_is_help=True,
        cls=DefaultCommandGroup if name in DEFAULTS else LiteralHelpGroup,
    )
    app.add_typer(group, name=name)
    return group


build_app = command_group(
    "build",
    "Make a benchmark from labels or sheets; subset or unpack one.",
    "Make a benchmark: from labelled images (the default: build LABELS --output OUT), from "
    "filled review or pick sheets; subsets and unpacked copies of any benchmark.",
)
check_app = command_group(
    "check",
    "Check a benchmark: integrity, contamination, shared images.",
    "Check a benchmark: its integrity (the default: check SPEC), contamination by a corpus, "
    "images it shares with another.",
)
reading_app = command_group(
    "reading",
    "How answers are read: extract, vocabularies, explain a gap.",
    "How answers are read: read answers from JSON lines, the axis vocabularies, and which "
    "verdicts two readings disagree on.",
)
