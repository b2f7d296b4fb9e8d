"""Fixtures of the model backend tests: tiny offline transformers checkpoints, each built once per
test session (and shared by every test that asks for its family)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def _builders() -> dict[str, Callable[[Path], Path]]:
    from tiny_hf import build_gemma3, build_llava
    from tiny_qwen import build_internvl, build_qwen
    from tiny_tiled import (
        build_idefics3,
        build_llava_next,
        build_llava_onevision,
        build_mllama,
        build_smolvlm,
    )

    return {
        "llava": build_llava,
        "gemma3": build_gemma3,
        "qwen2_vl": lambda folder: build_qwen(folder, "2"),
        "qwen2_5_vl": lambda folder: build_qwen(folder, "2.5"),
        "qwen3_vl": lambda folder: build_qwen(folder, "3"),
        "internvl": build_internvl,
        "idefics3": build_idefics3,
        "smolvlm": build_smolvlm,
        "mllama": build_mllama,
        "llava_next": build_llava_next,
        "llava_onevision": build_llava_onevision,
    }


FAMILIES = (
    "llava", "gemma3", "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "internvl", "idefics3", "smolvlm",
    "mllama", "llava_next", "llava_onevision",
)  # fmt: skip
"""Every family ``hf:`` verifies, by the ``model_type`` of its tiny checkpoint."""


class TinyCheckpoints:
    """Builds a family's tiny checkpoint the first time a test asks for it."""

    def __init__(self, factory: pytest.TempPathFactory) -> None:
        self.factory = factory
        self.built: dict[str, Path] = {}

    def __call__(self, family: str) -> Path:
        if family not in self.built:
            self.built[family] = _builders()[family](self.factory.mktemp(family))
        return self.built[family]


@pytest.fixture(scope="session")
def tiny_checkpoints(tmp_path_factory: pytest.TempPathFactory) -> TinyCheckpoints:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    return TinyCheckpoints(tmp_path_factory)


@pytest.fixture(scope="session", params=["llava", "gemma3"])
def tiny_model(request: pytest.FixtureRequest, tiny_checkpoints: TinyCheckpoints) -> Path:
    """A tiny LLaVA or Gemma 3 checkpoint folder, built once per test session."""
    return tiny_checkpoints(request.param)


@pytest.fixture(scope="session", params=FAMILIES)
def family_model(request: pytest.FixtureRequest, tiny_checkpoints: TinyCheckpoints) -> Path:
    """A tiny checkpoint of each verified family (its folder is named after the family)."""
    return tiny_checkpoints(request.param)
