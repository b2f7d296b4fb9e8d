"""Run directories below a folder: the one search `runs`, `view` and every folder argument use."""

from __future__ import annotations

from pathlib import Path

FIND_DEPTH = 3
"""How deep below a folder runs are looked for: ``runs/<run>``, and a study's
``studies/<study>/runs/<run>``."""


def runs_below(folder: Path) -> list[Path]:
    """Run directories (folders holding a ``run.json``) up to :data:`FIND_DEPTH` levels below
    `folder`, in path order."""
    return sorted(
        p.parent for depth in range(1, FIND_DEPTH + 1)
        for p in folder.glob("/".join(["*"] * depth) + "/run.json")
    )  # fmt: skip
