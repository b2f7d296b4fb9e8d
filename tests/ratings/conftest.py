"""Fixtures of the ratings tests: a random and an oracle run of one 30-item benchmark, built once
per module, and a fresh copy of both for each test (tests write sheets and imports into them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratings_helpers import copy_runs, make_runs


@pytest.fixture(scope="module")
def base_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_runs(tmp_path_factory.mktemp("base-runs"), n_items=30)


@pytest.fixture()
def runs(base_runs: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    return copy_runs(base_runs, tmp_path / "copy")
