"""A small generic registry mapping short names to lazily imported objects."""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Generic, TypeVar

from medlens.core.errors import SpecError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """One registered name."""

    name: str
    target: str
    """Import path as ``"package.module:attribute"``; imported only when the entry is used."""
    syntax: str
    """How a user writes a spec for this entry, e.g. ``gmai:PATH.tsv``."""
    summary: str


class Registry(Generic[T]):
    """Names → lazy ``module:attr`` targets, with did-you-mean errors."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._entries: dict[str, Entry] = {}

    def add(self, name: str, target: str, syntax: str, summary: str) -> None:
        self._entries[name] = Entry(name, target, syntax, summary)

    def __iter__(self) -> Iterator[Entry]:
        return iter(sorted(self._entries.values(), key=lambda e: e.name))

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: str) -> T:
        entry = self._entry(name)
        module_name, _, attr = entry.target.partition(":")
        module = importlib.import_module(module_name)
        obj: T = getattr(module, attr)
        return obj

    def module_of(self, name: str) -> ModuleType:
        """The module that defines `name`'s target (loaders keep declarations there)."""
        return importlib.import_module(self._entry(name).target.partition(":")[0])

    def _entry(self, name: str) -> Entry:
        entry = self._entries.get(name)
        if entry is None:
            close = difflib.get_close_matches(name, list(self._entries), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(sorted(self._entries))
            raise SpecError(f"unknown {self.what} {name!r}{hint} (known: {known})")
        return entry
