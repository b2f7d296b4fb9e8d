"""Every verified ``hf:`` family end to end on a tiny random checkpoint built offline (tests/
tiny_hf.py, tiny_qwen.py, tiny_tiled.py; nothing downloaded): the image reaches the model where
the chat template puts it, several images per item (in order), batched answers equal
one-at-a-time answers, option log-probabilities. This proves the code path, not quality."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from PIL import Image

from medlens.models.base import ImagePart, Message, TextPart
from medlens.models.hf import HFModel, conversation
from model_calls import answer_items
from tiny_hf import item, load


def noise_png(seed: int, size: tuple[int, int] = (64, 48)) -> bytes:
    """A seeded random RGB image: texture a vision tower cannot average away."""
    draw = random.Random(seed)
    image = Image.new("RGB", size)
    image.putdata([tuple(draw.randrange(256) for _ in range(3)) for _ in range(size[0] * size[1])])  # type: ignore[misc]
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def image_part(seed: int, size: tuple[int, int] = (64, 48)) -> ImagePart:
    return ImagePart(data=noise_png(seed, size), sha256=f"seed-{seed}-{size}", name=f"{seed}.png")


def model_type(folder: Path) -> str:
    return str(json.loads((folder / "config.json").read_text())["model_type"])


def inputs_of(backend: HFModel, *parts: TextPart | ImagePart) -> Any:
    return backend.model_inputs([conversation((Message("user", parts),))])


def logits(backend: HFModel, *parts: TextPart | ImagePart) -> Any:
    """The model's logits at every position of the prompt."""
    import torch

    with torch.inference_mode():
        return backend.model(**inputs_of(backend, *parts)).logits[0]


def image_positions(backend: HFModel, inputs: Any) -> list[int]:
    """Where the model's image token (its features' places) sits in the first prompt."""
    token = backend.model.config.image_token_id
    return [i for i, t in enumerate(inputs["input_ids"][0].tolist()) if t == token]


def test_the_image_sits_where_the_chat_template_puts_it(family_model: Path) -> None:
    backend = load(family_model)
    before, after = TextPart("Look at this scan first."), TextPart("Which organ is shown?")
    inputs = inputs_of(backend, before, image_part(1), after)
    positions = image_positions(backend, inputs)
    assert positions, f"{model_type(family_model)}: no image token in the prompt"
    ids = inputs["input_ids"][0].tolist()
    decode = backend.processor.tokenizer.decode
    head, tail = decode(ids[: positions[0]]), decode(ids[positions[-1] + 1 :])
    assert "Look at this scan first." in head and "Which organ" not in head
    assert "Which organ is shown?" in tail and "Look at this scan" not in tail


def test_the_pixels_reach_the_model(family_model: Path) -> None:
    import torch

    backend = load(family_model)
    question = TextPart("Which organ is shown?")
    first = logits(backend, image_part(1), question)[-1]
    assert torch.equal(first, logits(backend, image_part(1), question)[-1])
    assert not torch.allclose(first, logits(backend, image_part(2), question)[-1], atol=1e-6)


def test_several_images_per_item_each_in_its_place(family_model: Path) -> None:
    import torch

    backend = load(family_model)

    def prompt(first: int, second: int) -> tuple[TextPart | ImagePart, ...]:
        return (TextPart("First:"), image_part(first), TextPart("Second:"), image_part(second),
                TextPart("Compare the two scans."))  # fmt: skip

    two = inputs_of(backend, *prompt(1, 2))
    positions = image_positions(backend, two)
    ids = two["input_ids"][0].tolist()
    between = backend.processor.tokenizer.decode(ids[positions[0] : positions[-1] + 1])
    assert "Second:" in between  # image tokens on both sides of it: each image in its place
    # over the whole prompt (Llama 3.2 Vision's text reads only the image before it)
    both = logits(backend, *prompt(1, 2))
    for other in (prompt(3, 2), prompt(1, 3), prompt(2, 1)):  # each image is seen, in order
        assert not torch.allclose(both, logits(backend, *other), atol=1e-6)


def mixed_items() -> list[Any]:
    """Items of several image sizes, one without an image, one with two images."""
    sizes = [(64, 48), (90, 30), (40, 70), (120, 120)]
    items = [item(f"q{i}", (noise_png(10 + i, size),)) for i, size in enumerate(sizes)]
    items.append(item("text-only"))
    items.append(item("two", (noise_png(20), noise_png(21, (50, 80)))))
    return items


def test_batched_answers_equal_one_at_a_time_answers(family_model: Path) -> None:
    items = mixed_items()
    batched = answer_items(load(family_model, "&batch_size=4"), items, together=True)
    single = answer_items(load(family_model, "&batch_size=1"), items, together=False)
    assert all(r.error is None and isinstance(r.text, str) for r in batched)
    assert [r.text for r in batched] == [r.text for r in single]
    assert [r.usage for r in batched] == [r.usage for r in single]


def test_option_log_probabilities(family_model: Path) -> None:
    items = mixed_items()
    every = "&top_logprobs=100000"  # the whole (tiny) vocabulary
    batched = answer_items(load(family_model, every + "&batch_size=4", 12), items)
    single = answer_items(load(family_model, every + "&batch_size=1", 12), items, together=False)
    scored = [r.option_probs for r in batched if r.option_probs is not None]
    # a random model often writes only byte fragments, which name no option: most items say
    # something, and those that do give a distribution over the option letters
    assert len(scored) >= len(items) // 2, [r.text for r in batched]
    for probs in scored:
        assert set(probs) <= {"A", "B", "C", "D"} and all(0 < p <= 1 for p in probs.values())
        assert sum(probs.values()) <= 1 + 1e-6
    for first, second in zip(batched, single, strict=True):
        if first.option_probs is None:
            assert second.option_probs is None
        else:
            assert first.option_probs == pytest.approx(second.option_probs, rel=1e-3, abs=1e-5)
