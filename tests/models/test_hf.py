"""The hf: backend end to end with tiny random LLaVA and Gemma 3 models built here from configs.

This proves the code path (processor chat template, images, batching, usage), not quality. Nothing
is downloaded: tokenizers are trained on a few sentences, weights are random.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tiny_hf import item, load, png

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


from medlens.api import load_model  # noqa: E402
from medlens.core.errors import SpecError  # noqa: E402
from medlens.models.base import ModelContext, Response  # noqa: E402
from model_calls import answer_items, answer_requests, requests_for, with_broken_image  # noqa: E402


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
    with pytest.raises(SpecError, match=r"has no config\.json"):
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
