"""A small text-only benchmark (jsonl) and a replay file that gets exactly `correct` items right."""

from __future__ import annotations

import csv
import json
from pathlib import Path


def write_choice_benchmark(folder: Path, n: int, meta: dict[str, str] | None = None) -> Path:
    """`n` four-option questions whose gold is always A; `meta` goes on every item."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bench.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for index in range(n):
            item = {
                "id": str(index),
                "question": f"Which finding is shown in case {index}?",
                "kind": "choice",
                "options": {"A": "effusion", "B": "nodule", "C": "fracture", "D": "normal"},
                "answer": "A",
                "images": [],
                "meta": {"task": "diagnosis", **(meta or {})},
            }
            handle.write(json.dumps(item) + "\n")
    return path


def write_replay(folder: Path, n: int, correct: int) -> Path:
    """Predictions for write_choice_benchmark: the first `correct` answer A, the rest B."""
    path = folder / "predictions.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        for index in range(n):
            writer.writerow([index, "A" if index < correct else "B"])
    return path


def write_gmai_choice_tsv(folder: Path, n: int) -> Path:
    """The same `n` questions as a GMAI-MMBench TSV (one tiny grey PNG each, index = row)."""
    import base64
    import io

    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    Image.new("L", (4, 4), 128).save(buffer, format="PNG")
    image = base64.b64encode(buffer.getvalue()).decode()
    path = folder / "GMAI_mm_bench_VAL.tsv"
    lines = ["index\timage\tquestion\tA\tB\tC\tD\tanswer"]
    for index in range(n):
        question = f"Which finding is shown in case {index}?"
        lines.append(f"{index}\t{image}\t{question}\teffusion\tnodule\tfracture\tnormal\tA")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
