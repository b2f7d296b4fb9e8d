"""Tiny transformers VLMs (LLaVA, Gemma 3) built offline in a test folder, for the hf: and vllm: tests."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from medlens.api import load_model
from medlens.core.items import ImageRef, Item
from medlens.models.base import ModelContext
from medlens.models.hf import HFModel

torch = pytest.importorskip("torch")

SENTENCES = [
    "Question: Which organ is shown in the image? Options: A. liver B. lung C. heart D. kidney",
    "Answer with the letter of the single correct option (for example: Answer: B).",
    "The chest radiograph shows a normal heart size and clear lungs.",
    "USER: ASSISTANT: user model system Context: Hint: 0123456789",
] * 4


LLAVA_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'user' %}USER: {% else %}ASSISTANT: "
    "{% endif %}{% for item in message['content'] %}{% if item['type'] == 'image' %}<image>\n"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}\n{% endfor %}"
    "{% if add_generation_prompt %}ASSISTANT:{% endif %}"
)


GEMMA_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}<start_of_turn>"
    "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
    "{% for item in message['content'] %}{% if item['type'] == 'image' %}<start_of_image>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}{% endfor %}<end_of_turn>\n"
    "{% endfor %}{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
)


def train_tokenizer(special: list[str], **named: object) -> object:
    """A byte-level BPE tokenizer (~400 tokens, every byte present) trained on SENTENCES."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(SENTENCES, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, **named)


def tiny_text(config_class: type, vocab: int, **extra: object) -> object:
    return config_class(
        vocab_size=vocab,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        **extra,
    )


def tiny_vision(config_class: type) -> object:
    return config_class(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        image_size=224,
        patch_size=28,
    )


def build_llava(folder: Path) -> Path:
    from transformers import (
        CLIPVisionConfig,
        LlamaConfig,
        LlavaConfig,
        LlavaForConditionalGeneration,
        LlavaImageProcessorPil,
        LlavaProcessor,
    )

    torch.manual_seed(0)
    tokenizer = train_tokenizer(
        ["<pad>", "<s>", "</s>", "<image>"], pad_token="<pad>", bos_token="<s>", eos_token="</s>"
    )
    image_processor = LlavaImageProcessorPil(
        size={"shortest_edge": 224}, crop_size={"height": 224, "width": 224}
    )
    processor = LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=28,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=LLAVA_TEMPLATE,
    )
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    config = LlavaConfig(
        vision_config=tiny_vision(CLIPVisionConfig),  # type: ignore[arg-type]
        text_config=tiny_text(LlamaConfig, len(tokenizer), pad_token_id=ids("<pad>")),  # type: ignore[arg-type]
        image_token_index=ids("<image>"),
        image_seq_length=64,
        vision_feature_layer=-1,
        vision_feature_select_strategy="default",
    )
    model = LlavaForConditionalGeneration(config).eval()
    stops = {"eos_token_id": ids("</s>"), "pad_token_id": ids("<pad>"), "bos_token_id": ids("<s>")}
    return save(folder, model, processor, stops)


def build_gemma3(folder: Path) -> Path:
    """A tiny random Gemma 3 model + processor saved to `folder` (no download).

    Over 60 lines because Gemma 3 needs every size, token id and template set explicitly
    (HF_OFFLINE_NOTES.md); split up, the values that must agree would sit apart.
    """
    from transformers import (
        Gemma3Config,
        Gemma3ForConditionalGeneration,
        Gemma3ImageProcessorPil,
        Gemma3Processor,
        Gemma3TextConfig,
        SiglipVisionConfig,
    )

    torch.manual_seed(0)
    special = [
        "<pad>",
        "<eos>",
        "<bos>",
        "<start_of_turn>",
        "<end_of_turn>",
        "<start_of_image>",
        "<end_of_image>",
        "<image_soft_token>",
    ]
    tokenizer = train_tokenizer(
        special,
        pad_token="<pad>",
        bos_token="<bos>",
        eos_token="<eos>",
        extra_special_tokens={
            "boi_token": "<start_of_image>",
            "eoi_token": "<end_of_image>",
            "image_token": "<image_soft_token>",
        },
    )
    image_processor = Gemma3ImageProcessorPil(size={"height": 224, "width": 224})
    processor = Gemma3Processor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        chat_template=GEMMA_TEMPLATE,
        image_seq_length=16,
    )
    ids = tokenizer.convert_tokens_to_ids  # type: ignore[attr-defined]
    text = tiny_text(
        Gemma3TextConfig,
        len(tokenizer),
        head_dim=16,
        query_pre_attn_scalar=16,
        sliding_window=64,
        pad_token_id=ids("<pad>"),
    )
    config = Gemma3Config(
        text_config=text,  # type: ignore[arg-type]
        vision_config=tiny_vision(SiglipVisionConfig),  # type: ignore[arg-type]
        mm_tokens_per_image=16,
        boi_token_index=ids("<start_of_image>"),
        eoi_token_index=ids("<end_of_image>"),
        image_token_index=ids("<image_soft_token>"),
    )
    model = Gemma3ForConditionalGeneration(config).eval()
    with torch.no_grad():  # initialised to zeros, the projection would map every image to 0
        torch.nn.init.normal_(model.model.multi_modal_projector.mm_input_projection_weight)
    stops = {
        "eos_token_id": [ids("<eos>"), ids("<end_of_turn>")],
        "pad_token_id": ids("<pad>"),
        "bos_token_id": ids("<bos>"),
    }
    return save(folder, model, processor, stops)


def save(folder: Path, model: object, processor: object, stops: dict[str, object]) -> Path:
    for key, value in stops.items():
        setattr(model.generation_config, key, value)  # type: ignore[attr-defined]
    model.generation_config.do_sample = False  # type: ignore[attr-defined]
    model.save_pretrained(folder)  # type: ignore[attr-defined]
    processor.save_pretrained(folder)  # type: ignore[attr-defined]
    return folder


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def item(key: str, images: tuple[bytes, ...] = ()) -> Item:
    return Item(
        id=key,
        question="Which organ is shown in the image?",
        kind="choice",
        options={"A": "liver", "B": "lung", "C": "heart", "D": "kidney"},
        answer="B",
        images=tuple(
            ImageRef("bytes", data=data, name=f"{key}-{i}") for i, data in enumerate(images)
        ),
    )


def load(path: Path, options: str = "", max_new_tokens: int = 6) -> HFModel:
    spec = f"hf:{path}?max_new_tokens={max_new_tokens}{options}"
    backend = load_model(spec, ModelContext(items=()))
    assert isinstance(backend, HFModel)
    return backend
