"""What ``hf:`` refuses before loading weights (one line, exit 2, nothing written), and
``medlens models --check hf:DIR`` on every verified family's tiny checkpoint."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")
pytest.importorskip("transformers")

from cli_runs import invoke_run
from medlens.cli import app
from tiny_hf import item, png

TEXT_SIBLINGS = {
    "llava": "llama", "gemma3": "gemma3_text", "qwen2_vl": "qwen2", "qwen2_5_vl": "qwen2",
    "qwen3_vl": "qwen3", "internvl": "qwen2", "idefics3": "llama", "smolvlm": "llama",
    "mllama": "llama", "llava_next": "mistral", "llava_onevision": "qwen2",
}  # fmt: skip
"""The text-only model each family is built on: a folder of one is not a vision model."""

FAMILY_NAMES = {
    "llava": "LLaVA", "gemma3": "Gemma 3", "qwen2_vl": "Qwen2-VL", "qwen2_5_vl": "Qwen2.5-VL",
    "qwen3_vl": "Qwen3-VL", "internvl": "InternVL", "idefics3": "Idefics3",
    "smolvlm": "SmolVLM", "mllama": "Llama 3.2 Vision", "llava_next": "LLaVA-NeXT",
    "llava_onevision": "LLaVA-OneVision",
}  # fmt: skip


def model_type(folder: Path) -> str:
    return str(json.loads((folder / "config.json").read_text())["model_type"])


def one_item_bench(folder: Path) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "0.png").write_bytes(png((120, 60, 30)))
    line = {**item("q0").to_json(with_images=False), "images": ["0.png"]}
    (folder / "b.jsonl").write_text(json.dumps(line) + "\n")
    return f"jsonl:{folder / 'b.jsonl'}"


def refused(tmp_path: Path, model: str, needle: str) -> None:
    """``medlens run`` with `model` exits 2 with one line holding `needle`, writing nothing."""
    result = invoke_run(one_item_bench(tmp_path / "bench"), model, tmp_path / "runs", "r")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], result.output
    assert not (tmp_path / "runs").exists()


def test_a_text_only_sibling_is_refused(family_model: Path, tmp_path: Path) -> None:
    sibling = TEXT_SIBLINGS[model_type(family_model)]
    folder = tmp_path / "text-only"
    folder.mkdir()
    config = {"model_type": sibling, "architectures": ["ForCausalLM"], "vocab_size": 400}
    (folder / "config.json").write_text(json.dumps(config))
    refused(tmp_path, f"hf:{folder}", f"holds a text-only model ({sibling}")


def test_weights_without_their_processor_are_refused(family_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "weights-only"
    folder.mkdir()
    for name in ("config.json", "model.safetensors", "generation_config.json"):
        (folder / name).symlink_to(family_model / name)
    name = FAMILY_NAMES[model_type(family_model)]
    refused(tmp_path, f"hf:{folder}", f"holds the weights of a {name} but no processor")


def test_models_check_reports_family_template_token_and_resolution(family_model: Path) -> None:
    result = CliRunner().invoke(app, ["models", "--check", f"hf:{family_model}", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["family"] == FAMILY_NAMES[model_type(family_model)]
    config = json.loads((family_model / "config.json").read_text())
    assert report["image_token"]["id"] == config.get(
        "image_token_id", config.get("image_token_index")
    )
    assert report["resolution"] and report["sample_image"]["image_tokens"] >= 1
    assert "Which organ is shown in the image?" in report["chat_template"]["sample"]
    text = CliRunner().invoke(app, ["models", "--check", f"hf:{family_model}"])
    assert text.exit_code == 0
    for label in ("family:", "image token:", "resolution:", "chat template"):
        assert label in text.stdout


def test_an_unverified_family_is_refused_unless_asked(tmp_path: Path) -> None:
    folder = tmp_path / "paligemma"
    folder.mkdir()
    config = {"model_type": "paligemma", "vision_config": {}, "text_config": {}}
    (folder / "config.json").write_text(json.dumps(config))
    refused(tmp_path, f"hf:{folder}", "not a family medlens has verified")
    refused(tmp_path, f"hf:{folder}?unverified=true&max_pixels=1000", "is not a verified family")


def test_a_processor_of_another_checkpoint_is_refused(
    tiny_checkpoints: object, tmp_path: Path
) -> None:
    llava = tiny_checkpoints("llava")  # type: ignore[operator]
    folder = tmp_path / "mixed"
    shutil.copytree(llava, folder)
    config = json.loads((folder / "config.json").read_text())
    config["image_token_index"] += 1  # the model now expects another token than <image>
    (folder / "config.json").write_text(json.dumps(config))
    refused(tmp_path, f"hf:{folder}", "the processor belongs to another checkpoint")


def test_a_checkpoint_without_a_chat_template_is_refused(
    tiny_checkpoints: object, tmp_path: Path
) -> None:
    folder = tmp_path / "base"
    shutil.copytree(tiny_checkpoints("llava"), folder)  # type: ignore[operator]
    (folder / "chat_template.jinja").unlink()
    processor = json.loads((folder / "processor_config.json").read_text())
    processor.pop("chat_template", None)
    (folder / "processor_config.json").write_text(json.dumps(processor))
    refused(tmp_path, f"hf:{folder}", "has no chat template")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["models", "--check", "openai:gpt?base_url=http://127.0.0.1:1/v1"], "only hf:DIR"),
        (["models", "--json"], "--json goes with --check"),
        (["models", "--check", "hf:/nowhere/at/all"], "no model folder at /nowhere/at/all"),
    ],
)
def test_models_check_bad_input(args: list[str], needle: str) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and needle in result.output
    assert len([line for line in result.output.splitlines() if line.strip()]) == 1
