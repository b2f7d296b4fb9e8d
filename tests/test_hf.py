"""The hf: backend end to end with tiny random LLaVA and Gemma 3 models built here from configs.

This proves the code path (processor chat template, images, batching, usage), not quality. Nothing
is downloaded: tokenizers are trained on a few sentences, weights are random.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from PIL import Image  # noqa: E402

from medlens.api import load_model  # noqa: E402
from medlens.core.errors import SpecError  # noqa: E402
from medlens.core.items import ImageRef, Item  # noqa: E402
from medlens.models.base import ModelContext, Response  # noqa: E402
from medlens.models.hf import HFModel  # noqa: E402
from model_calls import answer_items, answer_requests, requests_for, with_broken_image  # noqa: E402

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


@pytest.fixture(scope="module", params=["llava", "gemma3"])
def tiny_model(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(request.param)
    return build_llava(folder) if request.param == "llava" else build_gemma3(folder)


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


def load(path: Path, options: str = "") -> HFModel:
    backend = load_model(f"hf:{path}?max_new_tokens=6{options}", ModelContext(items=()))
    assert isinstance(backend, HFModel)
    return backend


def test_generates_for_images_and_text_with_usage(tiny_model: Path) -> None:
    items = [item("a", (png((200, 10, 10)),)), item("b", (png((10, 200, 10)),)), item("c")]
    responses = answer_items(load(tiny_model), items)
    for response in responses:
        assert response.error is None and isinstance(response.text, str)
        assert response.usage["prompt_tokens"] > 10
        assert 1 <= response.usage["completion_tokens"] <= 6
    with_image, without = responses[0].usage["prompt_tokens"], responses[2].usage["prompt_tokens"]
    assert with_image >= without + 16  # the image tokens are part of the prompt


def test_batched_answers_equal_one_at_a_time_answers(tiny_model: Path) -> None:
    items = [
        item(f"q{i}", (png((i * 40, 90, 200 - i * 30), (30 + 7 * i, 20 + 5 * i)),))
        for i in range(5)
    ]
    backend = load(tiny_model, "&batch_size=4")
    batched = answer_items(backend, items, together=True)
    single = answer_items(load(tiny_model, "&batch_size=1"), items, together=False)
    assert [r.text for r in batched] == [r.text for r in single]
    assert [r.usage for r in batched] == [r.usage for r in single]


def test_batches_really_form(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = load(tiny_model, "&batch_size=3")
    sizes: list[int] = []
    original = backend.answer_batch

    def spy(requests: list[object]) -> list[Response]:
        sizes.append(len(requests))
        return original(requests)  # type: ignore[arg-type]

    monkeypatch.setattr(backend, "answer_batch", spy)
    answer_items(backend, [item(f"q{i}", (png((i, 2, 3)),)) for i in range(7)])
    assert sum(sizes) == 7 and max(sizes) == 3


def test_broken_image_fails_only_its_item(tiny_model: Path) -> None:
    backend = load(tiny_model)
    good, bad = requests_for(backend, [item("a", (png((1, 2, 3)),)), item("b", (png((4, 5, 6)),))])
    bad = with_broken_image(bad, b"GIF89a-not-really", "broken.gif")
    good, bad = answer_requests(backend, [good, bad])
    assert good.error is None and good.text is not None
    assert bad.error is not None and bad.error.type == "image" and "broken.gif" in bad.error.message


def test_spec_leaves_out_placement_options(tiny_model: Path) -> None:
    backend = load(tiny_model, "&batch_size=2&device=cpu&dtype=float32")
    assert backend.spec == f"hf:{tiny_model}?dtype=float32&max_new_tokens=6"
    assert backend.deterministic


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("?dtype=float8", "dtype='float8' must be one of"),
        ("?batch_size=0", "batch_size='0' must be at least 1"),
        ("?max_new_tokens=many", "max_new_tokens='many' is not an integer"),
        ("?device=toaster", "device='toaster' is not a torch device"),
        ("?colour=red", "unknown option"),
    ],
)
def test_bad_options_name_the_option(tmp_path: Path, options: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_model(f"hf:{tmp_path}{options}", ModelContext(items=()))


def test_missing_model_folder_is_a_spec_error_not_a_download(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no model folder at"):
        load_model(f"hf:{tmp_path / 'nothing-here'}", ModelContext(items=()))
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match="cannot load a vision-language model from"):
        load_model(f"hf:{tmp_path / 'empty'}", ModelContext(items=()))


def test_medlens_run_with_hf_end_to_end(tiny_model: Path, tmp_path: Path) -> None:
    import json

    from cli_runs import evaluate, run_options

    folder = tmp_path / "bench"
    folder.mkdir()
    lines = []
    for index in range(6):
        (folder / f"{index}.png").write_bytes(png((index * 30, 100, 50)))
        lines.append(
            json.dumps({**item(f"q{index}").to_json(with_images=False), "images": [f"{index}.png"]})
        )
    (folder / "b.jsonl").write_text("\n".join(lines) + "\n")
    options = run_options(
        bench=f"jsonl:{folder / 'b.jsonl'}",
        model=f"hf:{tiny_model}?max_new_tokens=4",
        out=tmp_path / "runs",
        name="hf",
        concurrency=4,
    )
    outcome = evaluate(options)
    records = [
        json.loads(x) for x in (tmp_path / "runs" / "hf" / "records.jsonl").read_text().splitlines()
    ]
    assert len(records) == 6 and all(
        r["error"] is None and r["output"] is not None for r in records
    )
    assert outcome.results["counts"]["records"] == 6
