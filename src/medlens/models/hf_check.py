"""``medlens models --check hf:DIR``: what a local checkpoint will do with an image, before a long
run — its family, chat template, image token and resolution, read without loading the weights."""

from __future__ import annotations

from typing import Any

from medlens.core.errors import SpecError
from medlens.core.specs import Spec

SAMPLE_QUESTION = "Which organ is shown in the image?"
SAMPLE_SIDE = 512
"""The sample image is SAMPLE_SIDE × SAMPLE_SIDE pixels: how many tokens one image costs."""


def check_hf(spec: Spec) -> dict[str, Any]:
    """The report of :func:`check_text` as data (``models --check --json``)."""
    from transformers import AutoConfig, AutoModelForImageTextToText

    from medlens.models.hf import parse_settings
    from medlens.models.hf_load import (
        check_processor,
        first_line,
        inspect_checkpoint,
        load_processor,
        model_image_token,
        settle_images,
    )

    settings = parse_settings(spec, {})
    checkpoint = inspect_checkpoint(settings.path, settings.resolution, settings.unverified)
    processor = load_processor(checkpoint)
    check_processor(checkpoint, processor)
    try:
        config = AutoConfig.from_pretrained(settings.path, local_files_only=True)
        found: Any = AutoModelForImageTextToText._model_mapping[type(config)]
        model_class = str(getattr(found, "__name__", found))
    except (OSError, ValueError, KeyError) as exc:
        raise SpecError(
            f"hf: {settings.path}: transformers has no image-text-to-text model for it "
            f"({first_line(exc)})"
        ) from None
    images = settle_images(checkpoint, processor, config, settings.resolution)
    return {
        "path": settings.path,
        "family": images["family"],
        "model_type": checkpoint.config.get("model_type"),
        "model_class": model_class,
        "processor_class": type(processor).__name__,
        "chat_template": _template(processor),
        "image_token": _image_token(processor, model_image_token(checkpoint.config)),
        "resolution": images["resolution"],
        "sample_image": _sample_cost(processor, model_image_token(checkpoint.config)),
    }


def _template(processor: Any) -> dict[str, Any]:
    """Where the chat template comes from and what it makes of one image and a question."""
    own = getattr(processor, "chat_template", None)
    source = "processor" if own else "tokenizer"
    rendered = processor.apply_chat_template(
        [_sample_turn(None)], add_generation_prompt=True, tokenize=False
    )
    text = rendered[0] if isinstance(rendered, list) else rendered
    return {"source": source, "sample": str(text)}


def _sample_turn(image: Any) -> dict[str, Any]:
    picture: dict[str, Any] = {"type": "image"}
    if image is not None:
        picture["image"] = image
    return {"role": "user", "content": [picture, {"type": "text", "text": SAMPLE_QUESTION}]}


def _image_token(processor: Any, token_id: int | None) -> dict[str, Any]:
    """The placeholder the template writes and the token the model puts image features at
    (they differ where the processor expands one into the other, e.g. Gemma 3)."""
    tokenizer = getattr(processor, "tokenizer", processor)
    token = tokenizer.convert_ids_to_tokens(token_id) if token_id is not None else None
    return {"placeholder": getattr(processor, "image_token", None), "text": token, "id": token_id}


def _sample_cost(processor: Any, token_id: int | None) -> dict[str, Any]:
    """The prompt tokens one grey SAMPLE_SIDE² image takes (image tokens among them) and the
    shape of the pixels the vision tower gets."""
    from PIL import Image

    image = Image.new("RGB", (SAMPLE_SIDE, SAMPLE_SIDE), (128, 128, 128))
    inputs = processor.apply_chat_template(
        [[_sample_turn(image)]], add_generation_prompt=True, tokenize=True, return_dict=True,
        return_tensors="pt",
    )  # fmt: skip
    ids = inputs["input_ids"][0].tolist()
    pixels = inputs.get("pixel_values")
    return {
        "size": f"{SAMPLE_SIDE}x{SAMPLE_SIDE}",
        "prompt_tokens": len(ids),
        "image_tokens": ids.count(token_id) if token_id is not None else None,
        "pixel_values": list(pixels.shape) if pixels is not None else None,
    }


def check_text(report: dict[str, Any]) -> list[str]:
    """The report as lines for the terminal."""
    resolution = ", ".join(f"{key} {value}" for key, value in report["resolution"].items())
    token = report["image_token"]
    sample = report["sample_image"]
    cost = f"{sample['prompt_tokens']} prompt tokens"
    if sample["image_tokens"] is not None:
        cost += f", {sample['image_tokens']} of them image tokens"
    if sample["pixel_values"] is not None:
        cost += f"; pixel_values {'×'.join(map(str, sample['pixel_values']))}"
    template = report["chat_template"]
    return [
        f"checkpoint: {report['path']}",
        f"family: {report['family']} (model_type {report['model_type']}, "
        f"{report['model_class']}, {report['processor_class']})",
        f"image token: {token['text']} (id {token['id']}){_placeholder(token)}",
        f"resolution: {resolution or 'not known (unverified family)'}",
        f"a {sample['size']} image: {cost}",
        f"chat template (from the {template['source']}), one image and a question:",
        *("  " + line for line in template["sample"].splitlines()),
    ]


def _placeholder(token: dict[str, Any]) -> str:
    """ ", written X by the template" where the template writes another token than the model's."""
    if token["placeholder"] in (None, token["text"]):
        return ""
    return f", written {token['placeholder']} by the template"
