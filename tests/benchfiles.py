"""Small native (jsonl) benchmarks written by tests, with real PNG images."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

from PIL import Image

from medlens.core.items import ImageRef, Item

AXES = {
    "department": ["Radiology", "Pathology", "Ophthalmology"],
    "granularity": ["image", "box", "mask", "contour"],
    "modality": ["CT", "MR", "Fundus"],
}


def write_png(path: Path, seed: int, size: int = 16) -> None:
    rng = random.Random(seed)
    image = Image.new("RGB", (size, size))
    image.putdata(
        [(rng.randrange(256), rng.randrange(256), rng.randrange(256)) for _ in range(size * size)]
    )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    path.write_bytes(buffer.getvalue())


def write_jsonl_benchmark(folder: Path, n_items: int, n_images: int = 20, seed: int = 0) -> Path:
    """A choice/multi-choice benchmark with GMAI-like axes; returns the .jsonl path."""
    rng = random.Random(seed)
    (folder / "images").mkdir(parents=True, exist_ok=True)
    for index in range(n_images):
        write_png(folder / "images" / f"{index}.png", index)
    lines = []
    for index in range(n_items):
        letters = "ABCDE"[: rng.choice([4, 5])]
        multi = index % 7 == 0
        answer = "".join(sorted(rng.sample(letters, 2))) if multi else rng.choice(letters)
        image = index % n_images
        meta = {axis: rng.choice(values) for axis, values in AXES.items()}
        meta["image_id"] = str(image)
        item = Item(
            id=f"q{index}",
            question=f"Question {index}?",
            kind="multi_choice" if multi else "choice",
            options={letter: f"option {letter.lower()} {index}" for letter in letters},
            answer=answer,
            images=(ImageRef(source="file", path=f"images/{image}.png", name=f"{image}.png"),),
            meta=meta,
        )
        lines.append(json.dumps(item.to_json(), ensure_ascii=False))
    path = folder / "bench.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
