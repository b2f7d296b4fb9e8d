"""Fixtures of the model backend tests: the tiny offline transformers models."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session", params=["llava", "gemma3"])
def tiny_model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny LLaVA or Gemma 3 checkpoint folder, built once per test session."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tiny_hf import build_gemma3, build_llava

    folder = tmp_path_factory.mktemp(request.param)
    return build_llava(folder) if request.param == "llava" else build_gemma3(folder)
