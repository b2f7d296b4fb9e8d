"""Shared test fixtures: where the real data lives, and a clean environment for every test."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from medlens.core.items import Item


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture runs (module- and session-scoped ones too), keep medlens off the user's
    own cache and data folders; subprocesses started by tests inherit this."""
    import os
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="medlens-tests-"))
    os.environ["MEDLENS_CACHE"] = str(base / "cache")
    os.environ["MEDLENS_DATA"] = str(base / "data")


REPO_ROOT = Path(__file__).resolve().parents[1]
REALDATA = REPO_ROOT.parent / "shared" / "realdata"


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


@pytest.fixture(scope="session")
def _session_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One demo-benchmark build per test session (builds are byte-identical)."""
    return tmp_path_factory.mktemp("medlens-data")


@pytest.fixture(autouse=True)
def _isolated_cache(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, _session_data: Path
) -> None:
    """Every test gets its own response cache and a test-session data dir, never the user's."""
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path_factory.mktemp("medlens-cache")))
    monkeypatch.setenv("MEDLENS_DATA", str(_session_data))
