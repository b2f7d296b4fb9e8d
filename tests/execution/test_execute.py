from __future__ import annotations

import asyncio
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from medlens.core.items import ImageRef, Item
from medlens.core.specs import parse_spec
from medlens.execution.cache import CachingModel, ResponseCache, with_cache
from medlens.execution.execute import process_item, run_local
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import ModelContext, Request, Response
from medlens.models.baselines import make_oracle, make_prior, make_random


def png(colour: int, size: int = 8) -> bytes:
    buffer = io.BytesIO()
    Image.new("L", (size, size), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def mcq(item_id: str, answer: str = "B", image: bytes | None = None) -> Item:
    images = (ImageRef(source="bytes", data=image, name=f"img{item_id}"),) if image else ()
    return Item(
        id=item_id,
        question="Which?",
        kind="choice",
        answer=answer,
        options={"A": "one", "B": "two", "C": "three"},
        images=images,
    )


@dataclass
class CountingModel:
    spec: str = "counting"
    deterministic: bool = True
    calls: list[str] = field(default_factory=list)

    async def generate(self, request: Request) -> Response:
        self.calls.append(request.item.id)
        return Response(text="B", usage={"prompt_tokens": 3})

    async def aclose(self) -> None:
        return None


def test_fingerprint_depends_on_pixels_and_model() -> None:
    settings = RunSettings()
    a = build_request(mcq("1", image=png(0)), "m", settings, None)
    b = build_request(mcq("1", image=png(255)), "m", settings, None)
    c = build_request(mcq("1", image=png(0)), "other", settings, None)
    assert len({a.fingerprint, b.fingerprint, c.fingerprint}) == 3
    assert a.fingerprint == build_request(mcq("1", image=png(0)), "m", settings, None).fingerprint


def test_undecodable_image_becomes_an_item_error_record() -> None:
    record = asyncio.run(
        process_item(mcq("1", image=b"not an image"), CountingModel(), RunSettings(), None)
    )
    assert record["error"]["type"] == "image"
    assert record["score"] is None


def test_oracle_scores_every_item() -> None:
    items = [mcq(str(i), answer="ABC"[i % 3], image=png(i)) for i in range(9)]
    oracle = make_oracle(parse_spec("oracle"), ModelContext(items))
    records: list[dict[str, object]] = []
    asyncio.run(run_local(items, oracle, RunSettings(concurrency=4), records.append))
    assert sorted(r["id"] for r in records) == [str(i) for i in range(9)]  # type: ignore[type-var]
    assert all(r["score"] == 1.0 for r in records)


def test_prior_answers_the_most_frequent_gold_letter() -> None:
    items = [mcq("1", "C"), mcq("2", "C"), mcq("3", "A")]
    prior = make_prior(parse_spec("prior"), ModelContext(items))
    assert {prior.answer(i) for i in items} == {"C"}


def test_prior_answers_the_majority_yes_no_answer() -> None:
    """It counted letters only, so on VQA-RAD (133 no, 118 yes) it answered "yes" like `first`."""
    items = [
        Item(id=str(i), question="q", kind="yes_no", answer="no" if i % 3 else "yes")
        for i in range(9)
    ]
    prior = make_prior(parse_spec("prior"), ModelContext(items))
    assert {prior.answer(i) for i in items} == {"no"}


def test_random_is_seeded_and_spread() -> None:
    items = [mcq(str(i)) for i in range(300)]
    first = make_random(parse_spec("random"), ModelContext(items, seed=1))
    again = make_random(parse_spec("random"), ModelContext(items, seed=1))
    other = make_random(parse_spec("random?seed=2"), ModelContext(items))
    answers = [first.answer(i) for i in items]
    assert answers == [again.answer(i) for i in items]
    assert answers != [other.answer(i) for i in items]
    assert all(60 < answers.count(letter) < 140 for letter in "ABC")


def test_cache_answers_repeated_deterministic_requests(tmp_path: Path) -> None:
    inner = CountingModel()
    cached = CachingModel(inner, ResponseCache(tmp_path / "c.sqlite"))
    request = build_request(mcq("1"), inner.spec, RunSettings(), None)
    first = asyncio.run(cached.generate(request))
    second = asyncio.run(cached.generate(request))
    assert inner.calls == ["1"]
    assert (first.cached, second.cached, second.text, dict(second.usage)) == (
        False,
        True,
        "B",
        {"prompt_tokens": 3},
    )


def test_nondeterministic_models_are_not_cached() -> None:
    assert isinstance(with_cache(CountingModel()), CachingModel)
    sampling = CountingModel(deterministic=False)
    assert with_cache(sampling) is sampling


@pytest.mark.parametrize("concurrency", [1, 3, 16])
def test_concurrency_is_bounded(concurrency: int) -> None:
    in_flight, peak = 0, 0

    class SlowModel(CountingModel):
        async def generate(self, request: Request) -> Response:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.001)
            in_flight -= 1
            return Response(text="A")

    items = [mcq(str(i)) for i in range(40)]
    asyncio.run(run_local(items, SlowModel(), RunSettings(concurrency=concurrency), lambda r: None))
    assert peak == concurrency


def test_cache_opens_concurrently_from_many_processes(tmp_path: Path) -> None:
    """Ray workers open one new cache file at the same moment; none may fail with 'database is
    locked' (switching to WAL takes a lock that SQLite's busy timeout does not wait for)."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    for round_ in range(3):
        path = tmp_path / f"c{round_}.sqlite"
        barrier = context.Barrier(6)
        workers = [
            context.Process(target=_open_cache_and_write, args=(path, i, barrier)) for i in range(6)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [w.exitcode for w in workers] == [0] * 6
        cache = ResponseCache(path)
        assert all(cache.get(f"f{i}") is not None for i in range(6))


def _open_cache_and_write(path: Path, index: int, barrier: Any) -> None:
    barrier.wait()
    cache = ResponseCache(path)
    cache.put(f"f{index}", Response(text="A"))
    cache.close()


def test_an_image_shared_by_questions_is_decoded_once_and_a_broken_one_every_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from medlens.execution import requests

    decoded: list[str] = []
    real = requests.decode_image

    def counting(data: bytes, *args: Any, **kwargs: Any) -> Any:
        decoded.append(kwargs.get("name", ""))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(requests, "decode_image", counting)
    shared = png(77, size=9)  # bytes no other test decodes
    settings = RunSettings()
    first = [build_request(mcq(str(k), image=shared), "m", settings, None) for k in range(3)]
    assert len(decoded) == 1
    assert len({r.messages[0].parts[0].sha256 for r in first}) == 1  # type: ignore[union-attr]
    for _ in range(2):
        record = asyncio.run(
            process_item(mcq("9", image=b"\x89PNG broken"), CountingModel(), settings, None)
        )
        assert record["error"]["type"] == "image"
    assert len(decoded) == 3  # a failed decoding is never remembered
