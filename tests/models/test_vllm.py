"""The vllm: backend: option parsing, the missing-package error, batching through LLM.chat.

The engine itself runs only where vllm is importable (it is not on the CPU CI machines); there the
last test builds a tiny LLaVA (see test_hf.py) and answers through a real ``vllm.LLM``.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image

from medlens.api import load_model
from medlens.core.errors import SpecError
from medlens.core.items import ImageRef, Item
from medlens.core.specs import parse_spec
from medlens.models.base import ModelContext
from medlens.models.vllm import VLLMModel, parse_settings
from model_calls import answer_items, answer_requests, requests_for, with_broken_image

HAS_VLLM = importlib.util.find_spec("vllm") is not None


def png(colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (20, 10), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def item(key: str, images: tuple[bytes, ...] = ()) -> Item:
    return Item(
        id=key,
        question="Which organ?",
        kind="choice",
        options={"A": "liver", "B": "lung"},
        answer="A",
        images=tuple(ImageRef("bytes", data=d, name=f"{key}-{i}") for i, d in enumerate(images)),
    )


class RecordingEngine:
    """Stands in for ``vllm.LLM``: records each ``chat`` call and answers like vLLM does."""

    def __init__(self) -> None:
        self.calls: list[list[list[dict[str, Any]]]] = []

    def chat(self, conversations: list[Any], sampling_params: Any, use_tqdm: bool) -> list[Any]:
        self.calls.append(conversations)
        return [
            SimpleNamespace(
                prompt_token_ids=list(range(10 + index)),
                outputs=[SimpleNamespace(text=f"Answer: {'AB'[index % 2]}", token_ids=[1, 2, 3])],
            )
            for index, _ in enumerate(conversations)
        ]


def fake_model(options: str = "") -> tuple[VLLMModel, RecordingEngine]:
    spec = parse_spec(f"vllm:/models/tiny?{options or 'max_tokens=8'}")
    engine = RecordingEngine()
    return VLLMModel(spec, parse_settings(spec, {}), engine, sampling=None), engine


def test_missing_vllm_is_a_clear_spec_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)  # makes `import vllm` raise ImportError
    with pytest.raises(SpecError, match=r"vllm package is not installed.*openai:"):
        load_model("vllm:/models/tiny", ModelContext(items=()))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("max_tokens=lots", "max_tokens='lots' is not a whole number"),
        ("temperature=-1", "temperature='-1' must not be negative"),
        ("flavour=mint", "unknown option"),
    ],
)
def test_bad_options_name_the_option(options: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_model(f"vllm:/models/tiny?{options}", ModelContext(items=()))


def test_needs_a_model_path() -> None:
    with pytest.raises(SpecError, match="give the model folder"):
        load_model("vllm:", ModelContext(items=()))


def test_requests_are_batched_into_llm_chat_with_png_data_urls() -> None:
    images = [png((i * 50, 0, 0)) for i in range(5)]
    backend, engine = fake_model("max_tokens=8&batch_size=3")
    responses = answer_items(backend, [item(f"q{i}", (images[i],)) for i in range(5)])
    assert sorted(len(call) for call in engine.calls) == [2, 3]
    first = engine.calls[0][0][0]
    assert first["role"] == "user"
    url = first["content"][0]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == images[0]  # stored PNG sent untouched
    assert first["content"][1]["type"] == "text" and "Which organ?" in first["content"][1]["text"]
    assert all(r.text and r.text.startswith("Answer: ") for r in responses)
    assert responses[0].usage == {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}


def test_broken_image_fails_only_its_item() -> None:
    backend, engine = fake_model()
    good, bad = requests_for(backend, [item("a", (png((1, 2, 3)),)), item("b", (png((4, 5, 6)),))])
    bad = with_broken_image(bad, b"GIF89a-not-really", "bad.gif")
    good, bad = answer_requests(backend, [good, bad])
    assert good.text == "Answer: A" and bad.error is not None and bad.error.type == "image"
    assert [len(call) for call in engine.calls] == [1]


def test_spec_leaves_out_engine_options_and_greedy_is_deterministic() -> None:
    backend, _ = fake_model("max_tokens=8&tensor_parallel_size=2&gpu_memory_utilization=0.5")
    assert backend.spec == "vllm:/models/tiny?max_tokens=8"
    assert backend.deterministic
    assert not fake_model("temperature=0.8")[0].deterministic
    assert fake_model("temperature=0.8&seed=4")[0].deterministic


@pytest.mark.skipif(not HAS_VLLM, reason="vllm is not installed (optional extra medlens[vllm])")
def test_real_vllm_engine_answers_a_tiny_llava(tmp_path: Path) -> None:  # pragma: no cover
    from tiny_hf import build_llava

    folder = build_llava(tmp_path / "llava")
    backend = load_model(
        f"vllm:{folder}?max_tokens=4&max_model_len=256&gpu_memory_utilization=0.3",
        ModelContext(items=()),
    )
    assert isinstance(backend, VLLMModel)
    responses = answer_items(backend, [item("a", (png((9, 9, 9)),)), item("b")])
    assert all(r.error is None and r.text is not None for r in responses)
    assert all(r.usage["prompt_tokens"] > 0 for r in responses)
