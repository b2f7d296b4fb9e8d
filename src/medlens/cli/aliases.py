"""The old flat command names that still reach their commands, and the groups that run a
default subcommand (owns how an argument list finds its command; ``groups`` makes the groups).

Each name a command had before the groups stays an alias (``ALIASES``): ``medlens audit ARGS``
is ``medlens check contamination ARGS``, with the same output byte for byte (its usage line and
error messages name the new path too), hidden from ``--help`` so that a reference walking the
command tree lists each command once. ``build`` and ``check`` were commands themselves: given
no subcommand name they run their default one, so ``medlens check SPEC`` is
``medlens check integrity SPEC``."""

from __future__ import annotations

import copy
from typing import Any

from medlens.cli.help_format import LiteralHelpGroup

ALIASES: dict[str, tuple[str, ...]] = {
    "build-from-review": ("build", "from-review"),
    "build-from-picks": ("build", "from-picks"),
    "subset": ("build", "subset"),
    "unpack": ("build", "unpack"),
    "audit": ("check", "contamination"),
    "overlap": ("check", "overlap"),
    "extract": ("reading", "extract"),
    "vocab": ("reading", "vocab"),
    "explain": ("reading", "explain"),
    "estimate": ("items", "estimate"),
    "gate": ("items", "gate"),
}
"""Old top-level name → the path of the command it now names."""

DEFAULTS: dict[str, str] = {"build": "from-labels", "check": "integrity"}
"""Group → the subcommand that runs when the first argument names none (the old command)."""


def canonical_args(args: list[str]) -> list[str]:
    """``args`` after ``medlens`` with an old name replaced by its new path."""
    if args and args[0] in ALIASES:
        return [*ALIASES[args[0]], *args[1:]]
    return args


def add_alias_commands(root: Any) -> None:
    """Hidden entries for the old names in the root group's command tree (so that a walk over
    the tree finds them, and skips them as hidden)."""
    for old, path in ALIASES.items():
        target = root
        for name in path:
            target = target.commands[name]
        alias = copy.copy(target)
        alias.name, alias.hidden = old, True
        root.commands[old] = alias


class DefaultCommandGroup(LiteralHelpGroup):
    """A group that runs its default subcommand when the first argument names no subcommand
    (an argument or an option of the old command); ``--help`` alone is the group's help."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        default = DEFAULTS.get(self.name or "")
        if default and args and args[0] not in self.commands and args[0] != "--help":
            args = [default, *args]
        return super().parse_args(ctx, args)
