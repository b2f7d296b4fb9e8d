"""``hf:`` image resolution per family (``max_pixels``/``min_pixels``, ``max_tiles``,
``longest_edge``): a smaller setting gives fewer image tokens, a setting below the family's minimum
or one the family does not have is one line and exit 2, and the settings in effect are recorded in
run.json and join the response-cache key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from test_hf_checkpoints import model_type, one_item_bench, refused
from test_hf_families import image_part

from cli_runs import invoke_run
from medlens.models.base import Message, TextPart
from medlens.models.hf import conversation
from tiny_hf import load

SMALLER = {
    "qwen2_vl": "max_pixels=3136", "qwen2_5_vl": "max_pixels=3136", "qwen3_vl": "max_pixels=4096",
    "internvl": "max_tiles=1", "idefics3": "longest_edge=56", "smolvlm": "longest_edge=56",
    "llava_next": "max_pixels=6272", "llava_onevision": "max_pixels=6272",
}  # fmt: skip
"""A setting below each family's default (the tiny checkpoints': tests/tiny_*.py)."""

TOO_SMALL = {
    "qwen2_vl": ("max_pixels=100", "below the family's minimum of 784"),
    "qwen2_5_vl": ("min_pixels=5000&max_pixels=4000", "min_pixels=5000 is above max_pixels=4000"),
    "qwen3_vl": ("max_pixels=1000", "below the family's minimum of 1024"),
    "internvl": ("max_tiles=0", "max_tiles='0' must be at least 1"),
    "idefics3": ("longest_edge=20", "below the family's minimum of 56 (one tile)"),
    "smolvlm": ("longest_edge=55", "below the family's minimum of 56 (one tile)"),
    "llava_next": ("max_pixels=6000", "below the family's minimum of 6272"),
    "llava_onevision": ("max_pixels=10", "below the family's minimum of 6272"),
    "llava": ("max_pixels=100000", "does not apply to LLaVA (its resolution is fixed"),
    "gemma3": ("min_pixels=100", "does not apply to Gemma 3 (its resolution is fixed"),
    "mllama": ("max_tiles=2", "aspect-ratio embeddings are trained for the checkpoint's tiles"),
}  # fmt: skip


def image_tokens(folder: Path, options: str = "") -> int:
    backend = load(folder, options)
    parts = (image_part(5, (200, 150)), TextPart("Which organ is shown?"))
    inputs = backend.model_inputs([conversation((Message("user", parts),))])
    return int((inputs["input_ids"][0] == backend.model.config.image_token_id).sum())


def test_a_smaller_setting_gives_fewer_image_tokens(family_model: Path) -> None:
    kind = model_type(family_model)
    if kind not in SMALLER:
        pytest.skip(f"{kind}: resolution fixed by the weights")
    assert image_tokens(family_model, "&" + SMALLER[kind]) < image_tokens(family_model)


def test_a_setting_below_the_minimum_is_refused(family_model: Path, tmp_path: Path) -> None:
    option, needle = TOO_SMALL[model_type(family_model)]
    refused(tmp_path, f"hf:{family_model}?{option}", needle)


def test_the_settings_are_recorded_and_join_the_cache_key(
    family_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    kind = model_type(family_model)
    option = SMALLER.get(kind, "")
    model = f"hf:{family_model}?max_new_tokens=3" + (f"&{option}" if option else "")
    result = invoke_run(one_item_bench(tmp_path / "bench"), model, tmp_path / "runs", "r")
    assert result.exit_code == 0, result.output
    recorded = json.loads((tmp_path / "runs" / "r" / "run.json").read_text())["image_settings"]
    assert recorded["family"] and recorded["resolution"]
    if option:
        key, value = option.split("=")
        assert recorded["resolution"][key] == int(value)
        default, smaller = load(family_model), load(family_model, "&" + option)
        assert default.cache_identity != smaller.cache_identity
        assert json.dumps(recorded["resolution"], sort_keys=True) in smaller.cache_identity
