"""Fixtures for every test: a clean environment (own cache and data folders). Helpers shared by
several folders are plain modules beside this file (data_paths, cli_runs, loopback_server, …)."""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture runs (module- and session-scoped ones too), keep medlens off the user's
    own cache and data folders; subprocesses started by tests inherit this."""
    import os
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="medlens-tests-"))
    os.environ["MEDLENS_CACHE"] = str(base / "cache")
    os.environ["MEDLENS_DATA"] = str(base / "data")


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


@pytest.fixture
def hub_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty Hub cache that huggingface_hub reads, offline."""
    from huggingface_hub import constants

    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    return cache
