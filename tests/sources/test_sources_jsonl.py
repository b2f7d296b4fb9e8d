"""The medlens-native jsonl loader: one Item per line, image paths relative to the file."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from data_paths import realdata_dir
from medlens.api import load_benchmark
from medlens.core.errors import InputError
from medlens.core.items import ImageRef, Item, decode_image

IMAGE = "synpic54610.jpg"


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    """A benchmark folder holding one real VQA-RAD image under images/."""
    source = realdata_dir("vqa_rad") / "VQA_RAD Image Folder" / IMAGE
    (tmp_path / "bench" / "images").mkdir(parents=True)
    shutil.copyfile(source, tmp_path / "bench" / "images" / IMAGE)
    return tmp_path / "bench"


def item_json(number: int, **changes: Any) -> dict[str, Any]:
    item = Item(
        id=f"q{number}",
        question="Are regions of the brain infarcted?",
        kind="choice",
        options={"A": "yes", "B": "no"},
        answer="A",
        images=(ImageRef("file", f"images/{IMAGE}"),),
        meta={"modality": "MR", "source": "VQA-RAD"},
    ).to_json()
    item.update(changes)
    return item


def write_jsonl(path: Path, lines: list[Any]) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def load(path: Path, options: str = "") -> list[Item]:
    return list(load_benchmark(f"jsonl:{path}{options}").items())


def test_round_trip_with_relative_image_paths(folder: Path) -> None:
    path = write_jsonl(folder / "bench.jsonl", [item_json(1), item_json(2, answer=None)])
    benchmark = load_benchmark(f"jsonl:{path}")
    assert (benchmark.split, benchmark.has_answers) == ("val", True)
    first, second = benchmark.items()
    assert first.id == "q1" and first.answer == "A" and second.answer is None
    assert first.meta == {"modality": "MR", "source": "VQA-RAD"}
    image = first.images[0]
    assert image.path == str(folder / "images" / IMAGE) and image.name == f"images/{IMAGE}"
    source = realdata_dir("vqa_rad") / "VQA_RAD Image Folder" / IMAGE
    assert image.read_bytes() == source.read_bytes()
    with Image.open(source) as original:
        assert decode_image(image.read_bytes()).tobytes() == original.convert("RGB").tobytes()


def test_plain_string_images_and_absolute_paths_inside_the_folder(folder: Path) -> None:
    inside = str(folder / "images" / IMAGE)
    lines = [item_json(1, images=[f"images/{IMAGE}"]), item_json(2, images=[inside])]
    items = load(write_jsonl(folder / "b.jsonl", lines))
    assert items[0].images[0].path == items[1].images[0].path == inside


def test_bytes_images_and_blank_lines(folder: Path) -> None:
    data = (folder / "images" / IMAGE).read_bytes()
    embedded = item_json(1, images=[ImageRef("bytes", data=data, name="x").to_json()])
    (item,) = load(write_jsonl(folder / "b.jsonl", ["", embedded, "   "]))
    assert item.images[0].read_bytes() == data


@pytest.mark.parametrize(
    ("lines", "expected_split", "has_answers", "options"),
    [
        ([item_json(1, answer=None)], "test", False, ""),
        ([item_json(1, meta={"split": "dev"})], "dev", True, ""),
        ([item_json(1)], "custom", True, "?split=custom"),
    ],
)
def test_split(
    folder: Path, lines: list[Any], expected_split: str, has_answers: bool, options: str
) -> None:
    path = write_jsonl(folder / "s.jsonl", lines)
    benchmark = load_benchmark(f"jsonl:{path}{options}")
    assert (benchmark.split, benchmark.has_answers) == (expected_split, has_answers)


def _escaping_paths(folder: Path) -> list[str]:
    os.symlink("/etc", folder / "etc-link")
    return ["../../etc/passwd", "/etc/passwd", "etc-link/passwd", "images/../../outside.png"]


def test_image_paths_escaping_the_folder_are_refused(folder: Path) -> None:
    for number, escaping in enumerate(_escaping_paths(folder)):
        lines = [item_json(1), item_json(2, images=[{"source": "file", "path": escaping}])]
        path = write_jsonl(folder / f"escape{number}.jsonl", lines)
        with pytest.raises(InputError) as caught:
            load_benchmark(f"jsonl:{path}")
        message = str(caught.value)
        assert message.startswith(f"{path}, line 2, field 'images[0]'"), message
        assert "outside the folder" in message and escaping in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('{"id": "q2", "question": "x", "kind": "choice", ', "line 2: not valid JSON"),
        ('["not", "an", "object"]', "line 2: expected a JSON object"),
        (json.dumps({"question": "x", "kind": "open"}), "line 2, field 'id': missing"),
        (json.dumps({"id": "q2", "kind": "open"}), "line 2, field 'question': missing"),
        (json.dumps({"id": "q2", "question": "x"}), "line 2, field 'kind': missing"),
        (json.dumps({"id": "q2", "question": "x", "kind": "essay"}), "unknown kind 'essay'"),
        (json.dumps(item_json(1)), "line 2, field 'id': duplicate id 'q1'"),
        (json.dumps(item_json(2, options=["yes"])), "line 2, field 'options': expected an object"),
        (json.dumps(item_json(2, images="a.png")), "line 2, field 'images': expected a list"),
        (json.dumps(item_json(2, images=[{"source": "url"}])), "line 2, field 'images[0]'"),
        (json.dumps(item_json(2, images=[{"source": "file"}])), "image has no path"),
    ],
)
def test_bad_lines_name_the_line_and_field(folder: Path, line: str, expected: str) -> None:
    path = write_jsonl(folder / "bad.jsonl", [item_json(1), line, item_json(3)])
    with pytest.raises(InputError) as caught:
        load(path)
    assert str(caught.value).startswith(str(path)) and expected in str(caught.value)


def test_non_utf8_and_empty_files(folder: Path) -> None:
    path = folder / "latin1.jsonl"
    path.write_bytes(json.dumps(item_json(1)).encode() + b'\n{"id": "q\xe9"}\n')
    with pytest.raises(InputError, match="line 2: bytes that are not UTF-8"):
        load(path)
    (folder / "empty.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="empty file"):
        load(folder / "empty.jsonl")
    with pytest.raises(InputError, match="no such jsonl file"):
        load(folder / "absent.jsonl")
