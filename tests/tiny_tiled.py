"""Tiny random Idefics3, SmolVLM, Llama 3.2 Vision (Mllama), LLaVA-NeXT and LLaVA-OneVision
checkpoints: the families that cut an image into tiles (or a grid of crops), saved as the Hub saves
them. Nothing is downloaded: tokenizers are trained on a few sentences, weights are random."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tiny_hf import LLAVA_TEMPLATE, save, tiny_text, tiny_vision, train_tokenizer
from tiny_qwen import QWEN_SPECIAL, QWEN_TEMPLATE, image_only, qwen_stops, save_hub_style

IDEFICS_TEMPLATE = (
    "<|im_start|>{% for message in messages %}{{ message['role'] | capitalize }}:"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}<image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}"
    "<end_of_utterance>\n{% endfor %}{% if add_generation_prompt %}Assistant:{% endif %}"
)

MLLAMA_TEMPLATE = (
    "<|begin_of_text|>{% for message in messages %}<|start_header_id|>{{ message['role'] }}"
    "<|end_header_id|>\n\n{% for item in message['content'] %}{% if item['type'] == 'image' %}"
    "<|image|>{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}"
    "<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant"
    "<|end_header_id|>\n\n{% endif %}"
)

ONEVISION_TEMPLATE = QWEN_TEMPLATE.replace(
    "<|vision_start|><|image_pad|><|vision_end|>", "<image>\n"
)

IDEFICS_SPECIAL = [
    "<|endoftext|>", "<|im_start|>", "<end_of_utterance>", "<fake_token_around_image>",
    "<image>", "<global-img>",
    *(f"<row_{row}_col_{col}>" for row in range(1, 7) for col in range(1, 7)),
]  # fmt: skip

GRID = [[56, 112], [112, 56], [112, 112], [112, 168], [168, 112]]
"""LLaVA-NeXT / OneVision crop grid (pixels, height × width) of the tiny models: 56-px crops."""


def build_idefics3(folder: Path) -> Path:
    """Idefics3: images resized to at most 112 px on the longest edge, cut in 56-px tiles of 4
    image tokens each, plus the whole image as one more tile."""
    from transformers import (
        Idefics3Config,
        Idefics3ForConditionalGeneration,
        Idefics3ImageProcessorPil,
        Idefics3Processor,
        Idefics3VisionConfig,
        LlamaConfig,
    )

    return _build_idefics(
        folder, Idefics3Processor, Idefics3ImageProcessorPil, Idefics3Config,
        Idefics3VisionConfig, Idefics3ForConditionalGeneration, LlamaConfig,
    )  # fmt: skip


def build_smolvlm(folder: Path) -> Path:
    """SmolVLM: Idefics3's layout with its own processor (which bundles a video processor)."""
    from transformers import (
        LlamaConfig,
        SmolVLMConfig,
        SmolVLMForConditionalGeneration,
        SmolVLMImageProcessorPil,
        SmolVLMProcessor,
        SmolVLMVisionConfig,
    )

    return _build_idefics(
        folder, image_only(SmolVLMProcessor), SmolVLMImageProcessorPil, SmolVLMConfig,
        SmolVLMVisionConfig, SmolVLMForConditionalGeneration, LlamaConfig,
    )  # fmt: skip


def _build_idefics(folder: Path, *classes: Any) -> Path:
    import torch

    processor_class, image_class, config_class, vision_class, model_class, text_class = classes
    torch.manual_seed(0)
    tokenizer = train_tokenizer(
        IDEFICS_SPECIAL, pad_token="<|endoftext|>", eos_token="<end_of_utterance>"
    )
    image_processor = image_class(
        size={"longest_edge": 112}, max_image_size={"longest_edge": 56}, do_image_splitting=True
    )
    video = {"video_processor": None} if "video_processor" in _init_names(processor_class) else {}
    processor = processor_class(
        image_processor=image_processor, tokenizer=tokenizer, image_seq_len=4,
        chat_template=IDEFICS_TEMPLATE, **video,
    )  # fmt: skip
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    vision = vision_class(
        hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        image_size=56, patch_size=14,
    )  # fmt: skip
    config = config_class(
        vision_config=vision,
        text_config=tiny_text(text_class, len(tokenizer), pad_token_id=ids("<|endoftext|>")),
        image_token_id=ids("<image>"),
        scale_factor=2,
    )
    model = model_class(config).eval()
    stops = {"eos_token_id": ids("<end_of_utterance>"), "pad_token_id": ids("<|endoftext|>")}
    return save_hub_style(folder, model, processor, stops)


def build_mllama(folder: Path) -> Path:
    """Llama 3.2 Vision: up to 4 tiles of 56 px, read through one cross-attention layer."""
    import torch
    from transformers import (
        MllamaConfig,
        MllamaForConditionalGeneration,
        MllamaImageProcessorPil,
        MllamaProcessor,
        MllamaTextConfig,
        MllamaVisionConfig,
    )

    torch.manual_seed(0)
    special = ["<|finetune_right_pad_id|>", "<|begin_of_text|>", "<|eot_id|>",
               "<|start_header_id|>", "<|end_header_id|>", "<|image|>", "<|python_tag|>"]  # fmt: skip
    tokenizer = train_tokenizer(
        special, pad_token=special[0], bos_token=special[1], eos_token=special[2]
    )
    processor = MllamaProcessor(
        image_processor=MllamaImageProcessorPil(
            size={"height": 56, "width": 56}, max_image_tiles=4
        ),
        tokenizer=tokenizer,
        chat_template=MLLAMA_TEMPLATE,
    )
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    vision = MllamaVisionConfig(
        hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_global_layers=1,
        attention_heads=2, image_size=56, patch_size=14, max_num_tiles=4,
        vision_output_dim=64, intermediate_layers_indices=[0],
    )  # fmt: skip
    text = MllamaTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, cross_attention_layers=[1],
        max_position_embeddings=512, bos_token_id=ids(special[1]), eos_token_id=ids(special[2]),
        pad_token_id=ids(special[0]),
    )  # fmt: skip
    config = MllamaConfig(
        vision_config=vision, text_config=text, image_token_index=ids("<|image|>")
    )
    model = MllamaForConditionalGeneration(config).eval()
    with torch.no_grad():  # initialised shut (tanh(0) = 0), the gates would hide every image
        for name, parameter in model.named_parameters():
            if "gate" in name.rsplit(".", 1)[-1]:
                parameter.fill_(1.0)
    stops = {"eos_token_id": ids(special[2]), "pad_token_id": ids(special[0]),
             "bos_token_id": ids(special[1])}  # fmt: skip
    return save(folder, model, processor, stops)


def build_llava_next(folder: Path) -> Path:
    """LLaVA-NeXT: a 56-px base view plus a grid of 56-px crops chosen from GRID."""
    import torch
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextImageProcessorPil,
        LlavaNextProcessor,
    )

    torch.manual_seed(0)
    tokenizer = train_tokenizer(
        ["<pad>", "<s>", "</s>", "<image>"], pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    image_processor = LlavaNextImageProcessorPil(
        size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56}, image_grid_pinpoints=GRID
    )
    processor = LlavaNextProcessor(
        image_processor=image_processor, tokenizer=tokenizer, patch_size=14,
        vision_feature_select_strategy="default", num_additional_image_tokens=1,
        chat_template=LLAVA_TEMPLATE,
    )  # fmt: skip
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    config = LlavaNextConfig(
        vision_config=_vision_56(CLIPVisionConfig),
        text_config=tiny_text(LlamaConfig, len(tokenizer), pad_token_id=ids("<pad>")),
        image_token_index=ids("<image>"),
        image_grid_pinpoints=GRID,
        image_seq_length=16,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    model = LlavaNextForConditionalGeneration(config).eval()
    stops = {"eos_token_id": ids("</s>"), "pad_token_id": ids("<pad>"), "bos_token_id": ids("<s>")}
    return save(folder, model, processor, stops)


def build_llava_onevision(folder: Path) -> Path:
    """LLaVA-OneVision: SigLIP crops of 56 px from GRID under a Qwen2 chat template."""
    import torch
    from transformers import (
        LlavaOnevisionConfig,
        LlavaOnevisionForConditionalGeneration,
        LlavaOnevisionImageProcessorPil,
        LlavaOnevisionProcessor,
        Qwen2Config,
        SiglipVisionConfig,
    )

    torch.manual_seed(0)
    named = {"image_token": "<image>", "video_token": "<video>"}
    tokenizer = train_tokenizer(
        [*QWEN_SPECIAL[:3], *named.values()], pad_token="<|endoftext|>", eos_token="<|im_end|>",
        extra_special_tokens=named,
    )  # fmt: skip
    image_processor = LlavaOnevisionImageProcessorPil(
        size={"height": 56, "width": 56}, image_grid_pinpoints=GRID
    )
    processor = image_only(LlavaOnevisionProcessor)(
        image_processor=image_processor, tokenizer=tokenizer, num_image_tokens=16,
        vision_feature_select_strategy="full", chat_template=ONEVISION_TEMPLATE,
    )  # fmt: skip
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    config = LlavaOnevisionConfig(
        vision_config=_vision_56(SiglipVisionConfig),
        text_config=tiny_text(Qwen2Config, len(tokenizer), pad_token_id=ids("<|endoftext|>")),
        image_token_index=ids("<image>"),
        video_token_index=ids("<video>"),
        image_grid_pinpoints=GRID,
        vision_feature_select_strategy="full",
    )
    model = LlavaOnevisionForConditionalGeneration(config).eval()
    return save_hub_style(folder, model, processor, qwen_stops(tokenizer))


def _init_names(cls: type) -> set[str]:
    import inspect

    return set(inspect.signature(cls.__init__).parameters)  # type: ignore[misc]


def _vision_56(config_class: type) -> Any:
    config = tiny_vision(config_class)
    config.image_size, config.patch_size = 56, 14  # type: ignore[attr-defined]
    return config
