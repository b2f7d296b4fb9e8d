"""Errors a user can cause; the CLI prints them in one line and exits with code 2."""

from __future__ import annotations


class MedlensError(Exception):
    """Base class for every error caused by user input (files, specs, servers)."""


class InputError(MedlensError):
    """A benchmark or prediction file is malformed.

    The message names the file, the row or line, and the field.
    """

    def __init__(self, path: object, where: str | None, problem: str) -> None:
        self.path = str(path)
        self.where = where
        self.problem = problem
        location = f"{self.path}, {where}" if where else self.path
        super().__init__(f"{location}: {problem}")


class SpecError(MedlensError):
    """A benchmark or model spec cannot be understood."""


class RunMismatchError(MedlensError):
    """An existing run directory was made with a different spec."""


class ItemError(Exception):
    """One item cannot be prepared (e.g. its image does not decode); the run records it and goes on."""

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        super().__init__(message)
