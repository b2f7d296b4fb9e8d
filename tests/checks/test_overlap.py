"""`medlens overlap`: near-duplicate images between two benchmarks by perceptual hash, on real
VQA-RAD images (its published test and train splits, and re-encoded, resized copies)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from data_paths import items_of, realdata_dir
from medlens.checks.overlap import nearest
from medlens.cli import app

imagehash = pytest.importorskip("imagehash")


def _images(count: int) -> list[bytes]:
    items = items_of(f"vqa-rad:{realdata_dir('vqa_rad')}")
    seen: dict[str, bytes] = {}
    for item in items:
        for image in item.images:
            seen.setdefault(image.name or image.path, image.read_bytes())
        if len(seen) >= count:
            break
    return list(seen.values())[:count]


def _bench(folder: Path, images: list[bytes], name: str) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for n, data in enumerate(images):
        (folder / f"{name}{n}.png").write_bytes(data)
        rows.append({"id": f"{name}{n}", "question": "What organ?", "kind": "open", "answer": "x",
                     "images": [f"{name}{n}.png"], "meta": {"source": name}})  # fmt: skip
    path = folder / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"jsonl:{path}"


def _jpeg_half(data: bytes) -> bytes:
    with Image.open(io.BytesIO(data)) as image:
        small = image.convert("RGB").resize((image.width // 2, image.height // 2))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=80)
    return out.getvalue()


def test_nearest_matches_imagehash_distances() -> None:
    hashes = [imagehash.phash(Image.open(io.BytesIO(d))) for d in _images(6)]
    values = [int(str(h), 16) for h in hashes]
    best, where = nearest(values[:3], values[3:])
    for i in range(3):
        distances = [hashes[i] - other for other in hashes[3:]]
        assert best[i] == min(distances) and where[i] == int(np.argmin(distances))


def test_re_encoded_copies_are_found_only_perceptually(tmp_path: Path) -> None:
    images = _images(12)
    a = _bench(tmp_path / "a", images[:8], "a")
    copies = [_jpeg_half(d) for d in images[:4]] + [images[4]] + images[8:12]
    b = _bench(tmp_path / "b", copies, "b")
    result = CliRunner().invoke(app, ["overlap", a, b, "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["images_a"] == 8 and found["images_b"] == 9
    assert found["near_duplicates"] == 5 and found["identical_bytes"] == 1
    assert found["only_perceptual"] == 4
    assert {row["a"] for row in found["examples"]} == {"a0", "a1", "a2", "a3", "a4"}
    assert found["by_source"] == {"a": {"near": 5, "images": 8}}
    strict = json.loads(CliRunner().invoke(app, ["overlap", a, b, "--max-distance", "0",
                                                 "--json"]).stdout)  # fmt: skip
    assert strict["near_duplicates"] >= 1 and strict["near_duplicates"] <= 5


def test_real_vqa_rad_test_and_train_share_more_than_identical_bytes_show(tmp_path: Path) -> None:
    folder = realdata_dir("vqa_rad")
    result = CliRunner().invoke(app, ["overlap", f"vqa-rad:{folder}", f"vqa-rad:{folder}?split=train",
                                      "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert found["images_a"] == 451
    assert found["near_duplicates"] >= found["identical_bytes"] > 0


def test_a_bad_distance_is_one_line_exit_2() -> None:
    result = CliRunner().invoke(app, ["overlap", "demo", "demo", "--max-distance", "40"])
    assert result.exit_code == 2 and "--max-distance 40" in result.output
