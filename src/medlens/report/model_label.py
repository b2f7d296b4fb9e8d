"""How a table names a model in a column of its own: the spec shortened for reading.

A models table already has a ``run`` column, so the model cell need not carry a whole file path
and its content hash (``replay:/home/…/predictions.csv?sha256=0fed72ae…``, issue 36): file-based
backends show the file or folder name, and transport options after ``?`` are left out. JSON keeps
the full spec.
"""

from __future__ import annotations

from pathlib import PurePath

PATH_BACKENDS = ("replay", "hf", "vllm")
"""Backends whose argument is a file or folder: shown by its last name."""


def model_label(spec: str) -> str:
    """``replay:/a/b/base.csv?sha256=…`` → ``replay:base.csv``; ``openai:gpt-4o?base_url=…`` →
    ``openai:gpt-4o``; a spec without a scheme is kept."""
    scheme, colon, rest = spec.partition(":")
    if not colon:
        return spec
    argument = rest.partition("?")[0]
    if scheme in PATH_BACKENDS:
        argument = PurePath(argument.rstrip("/")).name or argument
    return f"{scheme}:{argument}"
