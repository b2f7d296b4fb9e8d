"""Leakage probes: image replacement, question removal, option shuffling, and leakage suspects."""

from __future__ import annotations

import asyncio
import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from loopback_server import ServerConfig, gold_by_marker, gold_by_pixels, pixel_key, serve
from medlens.api import load_model
from medlens.core.errors import SpecError
from medlens.core.items import ImageRef, Item
from medlens.execution.probes import PROBES, get_probe, leakage_suspects
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import ImagePart, ModelContext, TextPart


def png(size: tuple[int, int], colour: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg(size: tuple[int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, (40, 80, 120)).save(buffer, format="JPEG")
    return buffer.getvalue()


def item(
    key: str = "q1",
    kind: str = "choice",
    answer: str | None = "B",
    n_options: int = 4,
    images: tuple[bytes, ...] = (),
) -> Item:
    letters = "ABCDE"[:n_options]
    return Item(
        id=key,
        question=f"[[{key}]] What is shown?",
        kind=kind,  # type: ignore[arg-type]
        options={letter: f"text {letter}" for letter in letters},
        answer=answer,
        images=tuple(ImageRef("bytes", data=d, name=f"{key}-{i}") for i, d in enumerate(images)),
        context="A hint.",
    )


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


def test_every_probe_is_registered_and_named() -> None:
    names = [entry.name for entry in PROBES]
    assert names == ["blank-image", "no-image", "noise-image", "options-only", "shuffle-options"]
    for name in names:
        assert get_probe(name, 3).name == name


def test_unknown_probe_suggests_the_closest_name() -> None:
    with pytest.raises(
        SpecError, match=r"unknown probe 'blank-imag'; did you mean 'blank-image'\?"
    ):
        get_probe("blank-imag", 0)


@pytest.mark.parametrize("source", [png((37, 21), (250, 0, 0)), jpeg((37, 21))])
def test_blank_image_is_mid_grey_of_the_same_size(source: bytes) -> None:
    probe = get_probe("blank-image", 0)
    it = item(images=(source,))
    out = probe.apply_image(it, 0, source)
    assert out is not None
    image = decoded(out)
    assert image.size == (37, 21) and image.mode == "RGB"
    assert set(image.get_flattened_data()) == {(128, 128, 128)}
    assert probe.apply_item(it) == it


def test_noise_image_is_seeded_by_item_index_and_seed() -> None:
    source = png((20, 10), (0, 0, 0))
    it, other = item("q1", images=(source, source)), item("q2", images=(source,))
    first = get_probe("noise-image", 1).apply_image(it, 0, source)
    assert first == get_probe("noise-image", 1).apply_image(it, 0, source)
    assert first != get_probe("noise-image", 2).apply_image(it, 0, source)
    assert first != get_probe("noise-image", 1).apply_image(it, 1, source)
    assert first != get_probe("noise-image", 1).apply_image(other, 0, source)
    assert first is not None
    pixels = np.asarray(decoded(first))
    assert pixels.shape == (10, 20, 3) and pixels.std() > 50


def test_no_image_drops_every_image_from_the_request() -> None:
    it = item(images=(png((8, 8), (1, 2, 3)), png((8, 8), (3, 2, 1))))
    probe = get_probe("no-image", 0)
    request = build_request(probe.apply_item(it), "m", RunSettings(), probe)
    assert not any(isinstance(p, ImagePart) for m in request.messages for p in m.parts)
    plain = build_request(it, "m", RunSettings(), None)
    assert request.fingerprint != plain.fingerprint


def test_options_only_removes_question_and_context_but_keeps_options_and_images() -> None:
    it = item(images=(png((8, 8), (1, 2, 3)),))
    probed = get_probe("options-only", 0).apply_item(it)
    assert probed.question == "" and probed.context is None
    assert probed.options == it.options and probed.answer == "B" and probed.images == it.images
    text = "".join(
        p.text
        for p in build_request(probed, "m", RunSettings(), None).messages[0].parts
        if isinstance(p, TextPart)
    )
    assert "What is shown" not in text and "text C" in text


@pytest.mark.parametrize(
    ("kind", "answer", "n_options"),
    [
        ("choice", "A", 2),
        ("choice", "C", 4),
        ("choice", "E", 5),
        ("multi_choice", "AC", 4),
        ("multi_choice", "BDE", 5),
        ("choice", None, 4),
    ],
)
def test_shuffle_keeps_each_gold_with_its_text(
    kind: str, answer: str | None, n_options: int
) -> None:
    probe = get_probe("shuffle-options", 7)
    for index in range(30):
        it = item(f"q{index}", kind, answer, n_options)
        probed = probe.apply_item(it)
        assert list(probed.options) == list(it.options)
        assert sorted(probed.options.values()) == sorted(it.options.values())
        if answer is None:
            assert probed.answer is None
            continue
        assert probed.answer is not None and list(probed.answer) == sorted(probed.answer)
        gold_texts = sorted(probed.options[letter] for letter in probed.answer)
        assert gold_texts == sorted(it.options[letter] for letter in answer)
        assert probe.apply_item(it) == probed


def test_shuffle_is_seeded_and_actually_moves_gold() -> None:
    items = [item(f"q{i}", answer="A") for i in range(200)]
    seven = [get_probe("shuffle-options", 7).apply_item(it).answer for it in items]
    eight = [get_probe("shuffle-options", 8).apply_item(it).answer for it in items]
    assert seven != eight
    counts = Counter(seven)
    assert set(counts) == set("ABCD") and min(counts.values()) > 25


@pytest.mark.parametrize("kind", ["yes_no", "open"])
def test_shuffle_leaves_non_choice_items_alone(kind: str) -> None:
    it = Item(id="x", question="q", kind=kind, answer="yes")  # type: ignore[arg-type]
    assert get_probe("shuffle-options", 1).apply_item(it) == it


def test_image_probes_change_what_an_image_reading_server_answers() -> None:
    images = [png((16, 16), (i * 9, 255 - i * 9, 3)) for i in range(24)]
    items = [item(f"q{i}", answer="ABCD"[i % 4], images=(data,)) for i, data in enumerate(images)]
    golds = {pixel_key(data): "ABCD"[i % 4] for i, data in enumerate(images)}

    def accuracy(probe_name: str | None) -> float:
        probe = get_probe(probe_name, 0) if probe_name else None
        with serve(ServerConfig(gold=gold_by_pixels(golds))) as running:
            backend = load_model(f"openai:m?base_url={running.base_url}", ModelContext(items=()))

            async def go() -> list[str | None]:
                requests = [
                    build_request(
                        probe.apply_item(it) if probe else it, backend.spec, RunSettings(), probe
                    )
                    for it in items
                ]
                out = [(await backend.generate(r)).text for r in requests]
                await backend.aclose()
                return out

            answers = asyncio.run(go())
        return sum(a == it.answer for a, it in zip(answers, items, strict=True)) / len(items)

    assert accuracy(None) == 1.0
    for name in ("blank-image", "noise-image", "no-image"):
        assert accuracy(name) < 0.5, name


def test_options_only_defeats_a_server_that_reads_the_question() -> None:
    items = [item(f"q{i}", answer="ABCD"[i % 4]) for i in range(24)]
    golds = {it.id: str(it.answer) for it in items}
    probe = get_probe("options-only", 0)
    with serve(ServerConfig(gold=gold_by_marker(golds))) as running:
        backend = load_model(f"openai:m?base_url={running.base_url}", ModelContext(items=()))

        async def go() -> list[str | None]:
            out = []
            for it in items:
                for chosen in (it, probe.apply_item(it)):
                    out.append(
                        (
                            await backend.generate(
                                build_request(chosen, backend.spec, RunSettings(), probe)
                            )
                        ).text
                    )
            await backend.aclose()
            return out

        answers = asyncio.run(go())
    plain, probed = answers[0::2], answers[1::2]
    assert plain == [it.answer for it in items]
    # without the marker the server can only guess: chance level, not the gold
    assert sum(a == it.answer for a, it in zip(probed, items, strict=True)) < len(items) / 2


def cell(n: int, score: float, lo: float, hi: float, random: float) -> dict[str, object]:
    """A results.json cell whose one-sided p against chance is scipy's exact binomial test."""
    from scipy.stats import binomtest

    p = None if not n else binomtest(round(score * n), n, random, alternative="greater").pvalue
    return {"n": n, "score": score, "ci": [lo, hi], "random": random, "p_above_chance": p}


def test_leakage_suspects_are_slices_whose_ci_clears_chance() -> None:
    results = {
        "overall": cell(600, 0.31, 0.27, 0.35, 0.25),
        "by": {
            "modality": {
                "CT": cell(300, 0.45, 0.39, 0.51, 0.25),
                "MR": cell(300, 0.26, 0.21, 0.31, 0.25),
                "US": cell(20, 0.60, 0.40, 0.80, 0.25),
            },
            "task": {
                "yes/no": cell(100, 0.70, 0.51, 0.80, 0.5),
                "even": cell(100, 0.70, 0.50, 0.80, 0.5),
                "none": cell(0, None, None, None, 0.25),  # type: ignore[arg-type]
            },
        },
    }
    suspects = leakage_suspects(results)
    # Holm over the 6 cells with n ≥ 50; US (n = 20) is never tested, MR is near chance.
    assert [(s.axis, s.value) for s in suspects] == [
        ("modality", "CT"),
        ("task", "even"),
        ("task", "yes/no"),
        ("overall", "all"),
    ]
    assert not any(s.small_n for s in suspects)
    first = suspects[0]
    assert (first.axis, first.value, first.n, first.score, first.ci) == (
        "modality", "CT", 300, 0.45, (0.39, 0.51)
    )  # fmt: skip
    assert first.p_adjusted == pytest.approx(min(1.0, 6 * first.p))
    assert first.to_json()["ci"] == [0.39, 0.51]


def test_no_suspects_when_every_ci_includes_chance() -> None:
    results = {
        "overall": cell(100, 0.27, 0.2, 0.34, 0.25),
        "by": {"task": {"a": cell(100, 0.3, 0.25, 0.4, 0.25)}},
    }
    assert leakage_suspects(results) == []
    assert leakage_suspects({}) == []


def test_an_axis_with_one_value_on_every_item_is_not_a_second_suspect() -> None:
    """lang=en / split=test repeat the overall cell; listing them buried the real slices."""
    results = {
        "overall": cell(500, 0.55, 0.51, 0.59, 1 / 3),
        "by": {
            "lang": {"en": cell(500, 0.55, 0.51, 0.59, 1 / 3)},
            "year": {
                "1997": cell(7, 0.86, 0.57, 1.0, 1 / 3),
                "2001": cell(10, 0.4, 0.1, 0.7, 1 / 3),
            },
            "source": {"pubmedqa": cell(480, 0.55, 0.51, 0.59, 1 / 3)},  # some items lack it
        },
    }
    assert [(s.axis, s.value) for s in leakage_suspects(results)] == [
        ("overall", "all"),
        ("source", "pubmedqa"),
    ]  # year=1997 (n = 7) is below min-n: never tested, never flagged


def test_image_probes_refuse_a_benchmark_without_images(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medlens.cli import app

    bench = tmp_path / "text.jsonl"
    item = Item(id="1", question="Q?", kind="yes_no", answer="yes")
    bench.write_text(json.dumps(item.to_json()) + "\n", encoding="utf-8")
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "prior", "--out", str(tmp_path / "r")]
    refused = CliRunner().invoke(app, [*args, "--probe", "no-image"])
    assert refused.exit_code == 2 and "has no images" in refused.output
    assert not (tmp_path / "r").exists()
    assert CliRunner().invoke(app, [*args, "--probe", "options-only"]).exit_code == 0


def write_image_benchmark(folder: Path, n_items: int) -> tuple[str, dict[str, str], dict[str, str]]:
    """Items with one distinct image each; golds by marker and by pixel hash."""
    folder.mkdir(parents=True, exist_ok=True)
    by_marker, by_pixels, lines = {}, {}, []
    for index in range(n_items):
        data = png((12, 12), (index % 256, (index * 7) % 256, 40))
        (folder / f"{index}.png").write_bytes(data)
        key, gold = f"q{index}", "ABCD"[(index * 3) % 4]
        by_marker[key], by_pixels[pixel_key(data)] = gold, gold
        record = item(key, answer=gold).to_json(with_images=False)
        record["images"] = [f"{index}.png"]
        record["meta"] = {"modality": "CT" if index % 2 else "MR"}
        lines.append(json.dumps(record))
    (folder / "bench.jsonl").write_text("\n".join(lines) + "\n")
    return f"jsonl:{folder / 'bench.jsonl'}", by_marker, by_pixels


@pytest.mark.parametrize(("reads", "flagged"), [("question", True), ("pixels", False)])
def test_blank_image_run_flags_a_text_reading_model_as_leakage_suspect(
    tmp_path: Path, reads: str, flagged: bool
) -> None:
    from cli_runs import evaluate, run_options

    bench, by_marker, by_pixels = write_image_benchmark(tmp_path / "bench", 160)
    lookup = gold_by_marker(by_marker) if reads == "question" else gold_by_pixels(by_pixels)
    with serve(ServerConfig(gold=lookup, accuracy=0.9)) as running:
        spec = f"openai:m?base_url={running.base_url}"
        base = evaluate(run_options(bench=bench, model=spec, out=tmp_path / "runs", name="base"))
        probed = evaluate(
            run_options(
                bench=bench, model=spec, out=tmp_path / "runs", name="blank", probe="blank-image"
            )
        )
    assert probed.store.run["spec"]["probe"] == "blank-image"
    assert base.results["overall"]["score"] > 0.8
    suspects = leakage_suspects(probed.results)
    assert any(s.axis == "overall" for s in suspects) is flagged
    if flagged:
        assert {(s.axis, s.value) for s in suspects} >= {("modality", "CT"), ("modality", "MR")}
    else:
        assert probed.results["overall"]["score"] < 0.45
