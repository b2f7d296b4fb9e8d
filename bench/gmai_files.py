"""Generated GMAI-MMBench-format files for the re-scoring bench: a VAL TSV and a prediction TSV.

The benchmark TSV has VLMEvalKit's MCQ layout (``index, question, A..E, answer, image`` plus
GMAI's ``category, l2-category, clinical VQA task, department, perceptual granularity,
modality``): 18 tasks × 18 departments × 38 modalities × 4 granularities, 3 questions per image
(the second and third rows name the first row's index in their image cell, VLMEvalKit's
reference convention), ~5% two-letter answers. The prediction file is what a VLMEvalKit
inference writes (every column but ``image``, plus ``prediction``), as TSV: one realistic
output per row (bare letters, "The answer is B.", boxed, JSON, Chinese, long reasoning,
refusals, hedges), 60% right.

    rows = write_gmai_files(folder, 26_000)   # → folder/GMAI-MMBench_VAL.tsv, …_predictions.tsv
"""

from __future__ import annotations

import base64
import csv
import io
import zlib
from pathlib import Path

import numpy as np

AXES = {"clinical VQA task": 18, "department": 18, "modality": 38}
GRANULARITIES = ("Image Level", "Box Level", "Mask Level", "Contour Level")
PER_IMAGE = 3
IMAGE_SIDE = 192
"""192 × 192 noise: ~50 KB of base64 per image, ~430 MB for 26,000 rows (GMAI's real images are
larger still; pandas reads this pair of files in about the 1.1 s the issue measured)."""
TERMS = (
    "Normal", "Diabetic retinopathy", "Drusen", "Glaucoma", "Pneumonia", "Pleural effusion",
    "Pneumothorax", "Cardiomegaly", "Adenocarcinoma", "Squamous cell carcinoma", "Melanoma",
    "Basal cell carcinoma", "Liver", "Kidney", "Spleen", "Brain", "Hemorrhage", "Infarct",
    "Fracture", "Nodule", "Cyst",
)  # fmt: skip
HEADER = (
    "index", "question", "A", "B", "C", "D", "E", "answer", "category", "l2-category",
    "clinical VQA task", "department", "perceptual granularity", "modality",
)  # fmt: skip
BENCH_NAME = "GMAI-MMBench_VAL.tsv"
PREDICTIONS_NAME = "GMAI-MMBench_VAL_predictions.tsv"


def noise_png(side: int, rng: np.random.Generator) -> bytes:
    """A side × side greyscale PNG of uniform noise: incompressible, so the file has the weight of
    real images (a replay never decodes them; pandas and VLMEvalKit read every byte)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = side.to_bytes(4, "big") * 2 + bytes([8, 0, 0, 0, 0])
    pixels = zlib.compress(b"".join(b"\0" + rng.bytes(side) for _ in range(side)), 1)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _output(options: dict[str, str], answer: str, form: int) -> str:
    letter = answer[0]
    forms = (
        answer,
        f"{letter}. {options[letter]}",
        f"The answer is {letter}.",
        f"Final answer: \\boxed{{{answer}}}",
        f'```json\n{{"answer": "{answer}"}}\n```',
        f"答案是{answer}",
        answer.lower(),
        options[letter],
        "Let's analyze the image step by step. The findings include irregular margins and "
        "heterogeneous enhancement, which we compare with each option in turn. "
        + " ".join(
            f"Option {k} ({v}) is less consistent." for k, v in options.items() if k != letter
        )
        + f"\nTherefore, the answer is {letter}.",
        "I cannot provide medical advice. Please consult a radiologist.",
        "It could be A or B.",
    )
    return forms[form]


FORM_WEIGHTS = (0.35, 0.12, 0.1, 0.05, 0.05, 0.03, 0.04, 0.06, 0.14, 0.03, 0.03)


def write_gmai_files(
    folder: Path, rows: int, seed: int = 0, image_side: int = IMAGE_SIDE
) -> tuple[Path, Path]:
    """Write the benchmark TSV and the prediction TSV of `rows` items into `folder`."""
    rng = np.random.default_rng(seed)
    axis_values = {
        axis: rng.choice(size, rows, p=rng.dirichlet(np.full(size, 0.8)))
        for axis, size in AXES.items()
    }
    weights = np.array(FORM_WEIGHTS)
    forms = rng.choice(len(FORM_WEIGHTS), size=rows, p=weights / weights.sum())
    bench, predictions = io.StringIO(), io.StringIO()
    bench_out = csv.writer(bench, delimiter="\t", lineterminator="\n")
    pred_out = csv.writer(predictions, delimiter="\t", lineterminator="\n")
    bench_out.writerow((*HEADER[:8], "image", *HEADER[8:]))
    pred_out.writerow((*HEADER, "prediction"))
    for i in range(rows):
        owner = i - i % PER_IMAGE
        k = 5 if rng.random() < 0.3 else 4
        texts = rng.choice(TERMS, size=k, replace=False)
        options = {chr(65 + j): str(t) for j, t in enumerate(texts)}
        if rng.random() < 0.05:
            answer = "".join(sorted(rng.choice(list(options), size=2, replace=False)))
        else:
            answer = chr(65 + int(rng.integers(k)))
        said = answer if rng.random() < 0.6 else str(rng.choice(list(options)))
        task = f"Task {axis_values['clinical VQA task'][i]}"
        cells = (
            str(i), f"Which finding is shown in image {owner // PER_IMAGE}?",
            *(options.get(letter, "") for letter in "ABCDE"), answer,
        )  # fmt: skip
        meta = (
            task, f"{task} / l2", task, f"Department {axis_values['department'][i]}",
            GRANULARITIES[(owner // PER_IMAGE) % 4], f"Modality {axis_values['modality'][i]}",
        )  # fmt: skip
        image = (
            base64.b64encode(noise_png(image_side, rng)).decode("ascii")
            if owner == i
            else str(owner)
        )
        bench_out.writerow((*cells, image, *meta))
        pred_out.writerow((*cells, *meta, _output(options, said, int(forms[i]))))
    folder.mkdir(parents=True, exist_ok=True)
    bench_path, predictions_path = folder / BENCH_NAME, folder / PREDICTIONS_NAME
    bench_path.write_text(bench.getvalue(), encoding="utf-8")
    predictions_path.write_text(predictions.getvalue(), encoding="utf-8")
    return bench_path, predictions_path
