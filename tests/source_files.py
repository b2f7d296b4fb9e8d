"""Small files in the native layouts of the seed benchmarks (images, OmniMedVQA, MMBU), for loader tests."""

from __future__ import annotations

import io
import json
from pathlib import Path

from PIL import Image


def png(colour: tuple[int, int, int] = (200, 10, 10)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def write_image(path: Path, colour: tuple[int, int, int] = (200, 10, 10)) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png(colour))


def omnimedvqa_root(tmp_path: Path) -> Path:
    write_image(tmp_path / "Images" / "ACRIMA" / "im1.png")
    write_image(tmp_path / "Images" / "Chest" / "x.png")
    records = [
        {
            "dataset": "ACRIMA",
            "question_id": "ACRIMA_0000",
            "question_type": "Disease Diagnosis",
            "question": "What is shown?",
            "gt_answer": "Glaucoma",
            "image_path": "Images/ACRIMA/im1.png",
            "option_A": "Normal",
            "option_B": "Glaucoma",
            "modality_type": "Fundus Photography",
        },
    ]
    restricted = [
        {
            "dataset": "Chest",
            "question_id": "Chest_0001",
            "question_type": "Modality Recognition",
            "question": "Which modality?",
            "gt_answer": "X-Ray",
            "image_path": "Images/Chest/x.png",
            "option_A": "CT",
            "option_B": "MRI",
            "option_C": "X-Ray",
            "option_D": "PET",
            "modality_type": "X-Ray",
        },
    ]
    for folder, data, name in (
        ("Open-access", records, "ACRIMA"),
        ("Restricted-access", restricted, "Chest"),
    ):
        path = tmp_path / "QA_information" / folder / f"{name}.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(data))
    return tmp_path


MMBU_HEADER = "index\timage_path\tquestion\tanswer\ttask\tquestion_type\tA\tB\tC\tdataset\tmodality"


def mmbu_file(tmp_path: Path, rows: list[str]) -> Path:
    write_image(tmp_path / "img" / "a.png")
    path = tmp_path / "mmbu.tsv"
    path.write_text("\n".join([MMBU_HEADER, *rows]) + "\n")
    return path
