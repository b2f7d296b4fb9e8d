"""The one rule for names a user gives to folders medlens writes (``run --name``,
``judge --name``): one plain folder name that no shell, listing or terminal misreads."""

from __future__ import annotations

import unicodedata

from medlens.core.errors import SpecError


def check_folder_name(flag: str, name: str) -> None:
    """Refuse empty names, path separators, '.'/'..', a leading '-' (read as an option by
    other tools) or '.' (hidden), and control or format characters (escape sequences,
    newlines, tabs, zero-width marks)."""
    problem = None
    if not name or name in (".", ".."):
        problem = "must be one folder name"
    elif "/" in name or "\\" in name:
        problem = "must be one folder name inside --out (no '/' or '\\')"
    elif name[0] in "-.":
        problem = f"must not start with {name[0]!r}"
    elif any(unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") for char in name):
        problem = "must not hold control characters (tabs, newlines, escape sequences)"
    if problem:
        raise SpecError(f"{flag} {name!r}: {problem}")
