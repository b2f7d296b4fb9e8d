"""Where the repository and the real data sets live, for tests in every folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from medlens.core.items import Item

REPO_ROOT = Path(__file__).resolve().parents[1]
REALDATA = Path(os.environ.get("MEDLENS_REALDATA") or REPO_ROOT.parent / "shared" / "realdata")
"""The real data sets: ../shared/realdata beside the repository, or $MEDLENS_REALDATA (a git
worktree elsewhere points it at the shared copy)."""


def realdata_dir(name: str) -> Path:
    """Path of one real data set under ../shared/realdata, or skip the test saying why."""
    path = REALDATA / name
    if not path.is_dir():
        pytest.skip(
            f"real data folder {path} is absent (it ships beside the repository in shared/)"
        )
    return path


def items_of(spec: str) -> list[Item]:
    """Every item of the benchmark ``spec``, loaded as ``medlens run`` loads it."""
    from medlens.api import load_benchmark

    return list(load_benchmark(spec).items())
