"""Tiny releases of MMMU, MedFrameQA, ReXVQA and M3D-VQA, written in their published layouts.

Each writer builds, in a test's temporary folder, the files a user gets from the release (column
names, file names, nesting and cell types as the dataset cards and the authors' code describe
them; see each loader's docstring), filled with generated text and tiny generated images. Nothing
is downloaded. ``rows`` sets how many questions; the published counts can be written in full.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
MMMU_MEDICAL = (
    "Basic_Medical_Science",
    "Clinical_Medicine",
    "Diagnostics_and_Laboratory_Medicine",
    "Pharmacy",
    "Public_Health",
)


def png(seed: int, size: int = 8) -> bytes:
    """A small greyscale PNG whose pixels depend on `seed` (distinct images, distinct bytes)."""
    pixels = (np.arange(size * size).reshape(size, size) * (seed % 7 + 1) + seed) % 256
    buffer = io.BytesIO()
    Image.fromarray(pixels.astype(np.uint8), mode="L").save(buffer, format="PNG")
    return buffer.getvalue()


def _image_cells(count: int, slots: int, seed: int, name: str) -> list[dict[str, Any] | None]:
    return [
        {"bytes": png(seed * 10 + k), "path": f"{name}_{k + 1}.png"} if k < count else None
        for k in range(slots)
    ]


def _write_parquet(path: Path, columns: dict[str, list[Any]], image_slots: int) -> None:
    arrays = {}
    for name, values in columns.items():
        numbered = name.startswith("image_") and name[6:].isdigit()
        arrays[name] = pa.array(values, type=IMAGE_TYPE if numbered else None)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(arrays), path, row_group_size=50)


# -- MMMU ----------------------------------------------------------------------------------------
MMMU_COLUMNS = ("id", "question", "options", "explanation", *(f"image_{k}" for k in range(1, 8)),
                "img_type", "answer", "topic_difficulty", "question_type", "subfield")  # fmt: skip


def mmmu_row(subject: str, split: str, number: int, *, images: int = 1, open_question: bool = False,
             hidden: bool = False) -> dict[str, Any]:  # fmt: skip
    """One MMMU row as the parquet holds it (options and img_type are list literals)."""
    tags = " ".join(f"<image {k}>" for k in range(1, images + 1))
    options = [] if open_question else [f"finding {k} of {number}" for k in range(4)]
    answer = "?" if hidden else ("7.5" if open_question else "ABCD"[number % 4])
    row = {"id": f"{split}_{subject}_{number}", "question": f"What does {tags} show? ({number})",
           "options": repr(options), "explanation": "", "img_type": "['Body Scans: MRI, CT.']",
           "answer": answer, "topic_difficulty": "Medium",
           "question_type": "open" if open_question else "multiple-choice",
           "subfield": "Radiology"}  # fmt: skip
    for k, cell in enumerate(_image_cells(images, 7, number, row["id"]), start=1):
        row[f"image_{k}"] = cell
    return row


def write_mmmu(root: Path, counts: dict[str, dict[str, int]], *,
               rows: dict[tuple[str, str], list[dict[str, Any]]] | None = None) -> Path:  # fmt: skip
    """``<Subject>/<split>-00000-of-00001.parquet`` per subject and split; `rows` overrides some."""
    for split, per_subject in counts.items():
        for subject, n in per_subject.items():
            given = (rows or {}).get((subject, split))
            table = given or [
                mmmu_row(subject, split, i + 1, images=1 + i % 3, open_question=i % 10 == 9,
                         hidden=split == "test")
                for i in range(n)
            ]  # fmt: skip
            columns = {c: [r.get(c) for r in table] for c in MMMU_COLUMNS}
            _write_parquet(root / subject / f"{split}-00000-of-00001.parquet", columns, 7)
    return root


# -- MedFrameQA ----------------------------------------------------------------------------------
MEDFRAME_TEXT = ("question_id", "system", "organ", "keyword", "modality", "video_id", "question",
                 "options", "image_url", "correct_answer")  # fmt: skip


def medframe_record(number: int, frames: int) -> dict[str, Any]:
    return {"question_id": f"q{number:05d}", "system": ("nervous", "cardiovascular")[number % 2],
            "organ": ("brain", "heart", "lung")[number % 3], "keyword": "stroke",
            "modality": ("CT", "MRI", "Ultrasound")[number % 3], "video_id": f"v{number // 3:04d}",
            "question": f"Across the {frames} frames, what changes? ({number})",
            "options": [f"option {k}" for k in range(5)], "image_url": "",
            "correct_answer": "ABCDE"[number % 5]}  # fmt: skip


def write_medframeqa_hub(root: Path, frame_counts: Sequence[int], *,
                         cells: dict[int, list[bool]] | None = None) -> Path:  # fmt: skip
    """``data/test-00000-of-00001.parquet``; `cells` marks which image cells of a row are filled."""
    records = [medframe_record(i, n) for i, n in enumerate(frame_counts)]
    columns: dict[str, list[Any]] = {c: [r[c] for r in records] for c in MEDFRAME_TEXT}
    for k in range(5):
        columns[f"image_{k + 1}"] = []
    for i, n in enumerate(frame_counts):
        filled = (cells or {}).get(i, [k < n for k in range(5)])
        for k in range(5):
            columns[f"image_{k + 1}"].append(
                {"bytes": png(i * 5 + k), "path": None} if filled[k] else None
            )
    _write_parquet(root / "data" / "test-00000-of-00001.parquet", columns, 5)
    return root


def write_medframeqa_release(root: Path, frame_counts: Sequence[int]) -> Path:
    """``MedFrameQA.json`` (a list of records with ``image_path``) and its frame files."""
    records = []
    for i, n in enumerate(frame_counts):
        record = medframe_record(i, n)
        record["image_path"] = [f"frames/{record['video_id']}/{i}_{k}.png" for k in range(n)]
        for k, relative in enumerate(record["image_path"]):
            (root / relative).parent.mkdir(parents=True, exist_ok=True)
            (root / relative).write_bytes(png(i * 5 + k))
        records.append(record)
    root.mkdir(parents=True, exist_ok=True)
    (root / "MedFrameQA.json").write_text(json.dumps(records, indent=1), encoding="utf-8")
    return root


# -- ReXVQA --------------------------------------------------------------------------------------
def rexvqa_record(number: int, images: int) -> tuple[str, dict[str, Any]]:
    study = f"pGRDN{number // 4:05d}_aGRDN{number // 4:05d}"
    paths = [
        f"../deid_png/{study}/studies/s1/series/r{k}/instances/i{k}.png" for k in range(images)
    ]
    tasks = ("presence assessment", "location analysis", "negation detection",
             "differential diagnosis", "geometric information")  # fmt: skip
    return f"{study}_{number}", {
        "question": f"Is there a finding in study {number}?",
        "options": [f"{letter}. answer {letter.lower()}" for letter in "ABCD"],
        "correct_answer": "ABCD"[number % 4], "correct_answer_explanation": "because",
        "task_name": tasks[number % 5], "category": "pleura", "class": "detail",
        "subcategory": "effusion", "study_id": study, "StudyInstanceUid": f"1.2.{number // 4}",
        "PatientID": f"p{number // 8}", "PatientSex": "F", "PatientAge": "061Y",
        "Indication": "cough", "Findings": "clear", "Impression": "normal",
        "ImageViewPosition": ["PA", "LATERAL"][:images], "ImageModality": ["DX"] * images,
        "ImagePath": paths,
    }  # fmt: skip


def write_rexvqa(root: Path, image_counts: Sequence[int], split: str = "test",
                 *, images_root: Path | None = None) -> Path:  # fmt: skip
    """``metadata/<split>_vqa_data.json`` and the study PNGs under ``deid_png/``."""
    data = dict(rexvqa_record(i, n) for i, n in enumerate(image_counts))
    pictures = images_root or root
    for number, record in enumerate(data.values()):
        for k, relative in enumerate(record["ImagePath"]):
            target = pictures / relative.removeprefix("../")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(png(number // 4 * 3 + k))  # the study's images (4 questions each)
    (root / "metadata").mkdir(parents=True, exist_ok=True)
    (root / "metadata" / f"{split}_vqa_data.json").write_text(json.dumps(data), encoding="utf-8")
    return root


# -- M3D-VQA -------------------------------------------------------------------------------------
M3D_COLUMNS = ("Image Path", "Text", "Question Type", "Question", "Choice A", "Choice B",
               "Choice C", "Choice D", "Answer", "Answer Choice")  # fmt: skip


def volume(depth: int = 32, size: int = 8, seed: int = 0) -> Any:
    """An M3D-Cap-style prepared volume: float32, shape 1×D×H×W, values in [0, 1]; slice k is
    filled with k/(D-1) so a rendered slice tells which index it was."""
    ramp = np.linspace(0.0, 1.0, depth, dtype=np.float32)[:, None, None]
    data = np.broadcast_to(ramp, (depth, size, size)).copy()
    data[:, 0, 0] = (seed % 5) / 10.0
    return data[None]


def write_m3dvqa(root: Path, rows: int, split: str = "test5k", *, volumes: int = 4,
                 depth: int = 32, images_root: Path | None = None) -> Path:  # fmt: skip
    """``M3D_VQA_<split>.csv`` and ``volumes`` prepared ``.npy`` volumes the rows share."""
    pictures = images_root or root
    for v in range(volumes):
        path = pictures / f"ct_case/{v:06d}/Axial_portal_venous.npy"
        path.parent.mkdir(parents=True, exist_ok=True)
        np.save(path, volume(depth, seed=v))
    types = ("Plane", "Phase", "Organ", "Abnormality", "Location")
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f"M3D_VQA_{split}.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(M3D_COLUMNS)
        for i in range(rows):
            letter = "ABCD"[i % 4]
            choices = [f"choice {c} {i}" for c in "ABCD"]
            writer.writerow([f"ct_case/{i % volumes:06d}/Axial_portal_venous.npy",
                             "Report, with a comma.", types[i % 5], f"Which organ, row {i}?",
                             *choices, choices["ABCD".index(letter)], letter])  # fmt: skip
    return root


def write_nifti(path: Path, data: Any, affine: Any = None) -> Path:
    """A NIfTI volume (nibabel) with `affine` (default: RAS+ 1 mm voxels)."""
    import nibabel

    path.parent.mkdir(parents=True, exist_ok=True)
    nibabel.save(
        nibabel.Nifti1Image(
            np.asarray(data, dtype=np.int16), affine if affine is not None else np.eye(4)
        ),
        path,
    )
    return path
