"""``hf:`` with ``top_logprobs=K``: per-option probabilities from the generation scores of tiny
random LLaVA and Gemma 3 models (built in test_hf.py from configs, nothing downloaded)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from medlens.api import load_model
from medlens.core.errors import SpecError
from medlens.models.base import ModelContext
from model_calls import answer_items
from tiny_hf import item, load, png


def test_scores_give_probabilities_over_the_option_letters(tiny_model) -> None:  # type: ignore[no-untyped-def]
    # Both items carry an image: given the text-only prompt (no example answer since prompt
    # version 2), the random tiny LLaVA writes only partial-byte tokens, which say nothing, and
    # medlens rightly gives no probabilities for them (`answer_position`).
    items = [item("a", (png((200, 10, 10)),)), item("b", (png((10, 10, 200)),))]
    backend = load(tiny_model, "&top_logprobs=100000")  # the whole (tiny) vocabulary
    responses = answer_items(backend, items)
    for response in responses:
        assert response.error is None
        probs = response.option_probs
        assert probs is not None and set(probs) <= set(items[0].options) and probs
        assert all(0.0 < p <= 1.0 for p in probs.values()) and sum(probs.values()) <= 1.0 + 1e-6
    again = answer_items(load(tiny_model, "&top_logprobs=100000&batch_size=1"), items)
    for first, second in zip(responses, again, strict=True):
        assert first.option_probs == pytest.approx(second.option_probs, rel=1e-3, abs=1e-5)


def test_without_top_logprobs_there_are_none(tiny_model) -> None:  # type: ignore[no-untyped-def]
    (response,) = answer_items(load(tiny_model), [item("c")])
    assert response.option_probs is None


@pytest.mark.parametrize(("value", "message"), [("x", "not an integer"), ("-1", "at least 0")])
def test_bad_top_logprobs(tmp_path, value: str, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(SpecError, match=message):
        load_model(
            f"hf:{tmp_path}?top_logprobs={value}", ModelContext(items=(), describe_only=True)
        )
