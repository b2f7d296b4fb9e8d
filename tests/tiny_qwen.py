"""Tiny random Qwen2-VL, Qwen2.5-VL, Qwen3-VL and InternVL checkpoints, saved as the Hub saves them.

Their processors bundle a video processor that needs torchvision (absent here, see
HF_OFFLINE_NOTES.md); the builders make the processor without it (``image_only``), and the saved
folder names the full processor class, as a real checkpoint does: loading it is medlens's job.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tiny_hf import save, tiny_text, train_tokenizer

QWEN_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]

QWEN_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}"
    "<|vision_start|><|image_pad|><|vision_end|>{% elif item['type'] == 'text' %}"
    "{{ item['text'] }}{% endif %}{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

INTERNVL_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}<IMG_CONTEXT>\n"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def save_hub_style(folder: Path, model: object, processor: Any, stops: dict[str, object]) -> Path:
    """`save`, plus the image processor's own ``preprocessor_config.json`` as Hub checkpoints
    carry it (transformers then reads the video processor's settings from it too)."""
    save(folder, model, processor, stops)
    processor.image_processor.save_pretrained(folder)
    return folder


def image_only(processor_class: type) -> type:
    """The processor class without its video processor (which needs torchvision)."""
    attributes = [a for a in processor_class.get_attributes() if a != "video_processor"]  # type: ignore[attr-defined]
    return type(
        processor_class.__name__,
        (processor_class,),
        {"get_attributes": classmethod(lambda cls: attributes)},
    )


def qwen_tokenizer() -> Any:
    return train_tokenizer(QWEN_SPECIAL, pad_token="<|endoftext|>", eos_token="<|im_end|>")


def qwen_stops(tokenizer: Any) -> dict[str, object]:
    ids = tokenizer.convert_tokens_to_ids
    return {"eos_token_id": ids("<|im_end|>"), "pad_token_id": ids("<|endoftext|>")}


def qwen_token_ids(tokenizer: Any) -> dict[str, int]:
    ids = tokenizer.convert_tokens_to_ids
    return {
        "image_token_id": ids("<|image_pad|>"),
        "video_token_id": ids("<|video_pad|>"),
        "vision_start_token_id": ids("<|vision_start|>"),
        "vision_end_token_id": ids("<|vision_end|>"),
    }


def build_qwen(folder: Path, version: str) -> Path:
    """A tiny Qwen2-VL (``"2"``), Qwen2.5-VL (``"2.5"``) or Qwen3-VL (``"3"``) checkpoint."""
    import torch
    import transformers
    from transformers import Qwen2VLImageProcessorPil

    torch.manual_seed(0)
    tokenizer = qwen_tokenizer()
    patch = 16 if version == "3" else 14
    # at most 16 merged tokens per image: tiny sequences, several sizes of image still differ
    image_processor = Qwen2VLImageProcessorPil(
        min_pixels=(2 * patch) ** 2, max_pixels=16 * (2 * patch) ** 2, patch_size=patch,
        merge_size=2, temporal_patch_size=2,
    )  # fmt: skip
    names = {"2": "Qwen2VL", "2.5": "Qwen2_5_VL", "3": "Qwen3VL"}[version]
    processor = image_only(getattr(transformers, f"{names}Processor"))(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=QWEN_TEMPLATE
    )
    config_class = getattr(transformers, f"{names}Config")
    model_class = getattr(transformers, f"{names}ForConditionalGeneration")
    config = config_class(
        text_config=qwen_text(version, len(tokenizer), tokenizer),
        vision_config=qwen_vision(version, patch),
        **qwen_token_ids(tokenizer),
    )
    model = model_class(config).eval()
    return save_hub_style(folder, model, processor, qwen_stops(tokenizer))


def qwen_text(version: str, vocab: int, tokenizer: Any) -> dict[str, Any]:
    rope = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]}
    if version == "3":
        rope["mrope_interleaved"] = True  # type: ignore[assignment]
    text: dict[str, Any] = {
        "vocab_size": vocab, "hidden_size": 32, "intermediate_size": 64,
        "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
        "max_position_embeddings": 512, "rope_parameters": rope,
        "pad_token_id": tokenizer.convert_tokens_to_ids("<|endoftext|>"),
        "bos_token_id": None, "eos_token_id": tokenizer.convert_tokens_to_ids("<|im_end|>"),
    }  # fmt: skip
    if version == "3":
        text["head_dim"] = 16
    return text


def qwen_vision(version: str, patch: int) -> dict[str, Any]:
    common = {"depth": 1, "hidden_size": 32, "intermediate_size": 64, "num_heads": 2,
              "patch_size": patch, "spatial_merge_size": 2, "temporal_patch_size": 2}  # fmt: skip
    if version == "2":
        return {**common, "embed_dim": 32, "mlp_ratio": 2}
    if version == "2.5":
        return {**common, "out_hidden_size": 32, "fullatt_block_indexes": [0], "window_size": 56}
    return {**common, "out_hidden_size": 32, "num_position_embeddings": 16,
            "deepstack_visual_indexes": [0]}  # fmt: skip


def build_internvl(folder: Path) -> Path:
    """A tiny InternVL (transformers format: ``InternVLForConditionalGeneration``) checkpoint:
    112-pixel tiles of 16 image tokens, at most 4 tiles (+ a thumbnail) per image."""
    import torch
    from transformers import (
        GotOcr2ImageProcessorPil,
        InternVLConfig,
        InternVLForConditionalGeneration,
        InternVLProcessor,
        InternVLVisionConfig,
        Qwen2Config,
    )

    torch.manual_seed(0)
    named = {"start_image_token": "<img>", "end_image_token": "</img>",
             "context_image_token": "<IMG_CONTEXT>", "video_token": "<video>"}  # fmt: skip
    tokenizer = train_tokenizer(
        [*QWEN_SPECIAL[:3], *named.values()],
        pad_token="<|endoftext|>",
        eos_token="<|im_end|>",
        extra_special_tokens=named,
    )
    image_processor = GotOcr2ImageProcessorPil(
        size={"height": 112, "width": 112}, crop_to_patches=True, min_patches=1, max_patches=4
    )
    processor = image_only(InternVLProcessor)(
        image_processor=image_processor, tokenizer=tokenizer, image_seq_length=16,
        chat_template=INTERNVL_TEMPLATE,
    )  # fmt: skip
    vision = InternVLVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        image_size=[112, 112], patch_size=[14, 14],
    )  # fmt: skip
    pad = tokenizer.convert_tokens_to_ids("<|endoftext|>")  # type: ignore[attr-defined]
    config = InternVLConfig(
        vision_config=vision,
        text_config=tiny_text(Qwen2Config, len(tokenizer), pad_token_id=pad),  # type: ignore[arg-type]
        image_token_id=tokenizer.convert_tokens_to_ids("<IMG_CONTEXT>"),  # type: ignore[attr-defined]
        image_seq_length=16,
        downsample_ratio=0.5,
        tie_word_embeddings=False,  # tied, a random model repeats its last token ("\n") forever
    )
    model = InternVLForConditionalGeneration(config).eval()
    return save_hub_style(folder, model, processor, qwen_stops(tokenizer))
