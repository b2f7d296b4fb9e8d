"""Fixtures for every test: a clean environment (own cache and data folders). Helpers shared by
several folders are plain modules beside this file (data_paths, cli_runs, loopback_server, …)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# pytest imports GNU readline, which exports the terminal's COLUMNS and LINES (80 without a
# terminal), so xdist's workers start with them set, and medlens sizes its tables by them when
# it is imported (folder conftests import it before any pytest_configure). Every test sees the
# width a pipe gets unless it asks for one (COLUMNS in its env), however pytest was started.
for _variable in ("COLUMNS", "LINES"):
    os.environ.pop(_variable, None)
    os.unsetenv(_variable)  # readline may have set it below os.environ's back

# A shell starts a background job (`make test &`, `nohup … &`) with SIGINT ignored, and an ignored
# signal stays ignored across exec: every medlens process a test starts would then ignore the
# Ctrl-C the Ctrl-C tests send it, and run to its end. A handler (unlike an ignored signal) is
# reset at exec, so the processes the tests start get Python's own Ctrl-C, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """Before any fixture runs (module- and session-scoped ones too), keep medlens off the user's
    own cache and data folders; subprocesses started by tests inherit this."""
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
