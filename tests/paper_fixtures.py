"""Small Med-CMR- and MMBU-shaped benchmarks with replayed models of known correctness, and the
per-item scores the loopback judge (``judge_server.verdict``) gives, computed by hand.

Med-CMR: per capability dimension, ``MCQ_PER_DIM`` five-option questions (gold A) and
``OPEN_PER_DIM`` open questions; two questions share each image. A model is a set of right
items: its MCQ answer is the gold letter or B; its open answer the gold, a listed synonym (the
rules miss it, the judge does not) or the negated gold (wrong for both).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

from cli_runs import named_run

DIMENSIONS = ("SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI")
OPTIONS = {"A": "effusion", "B": "nodule", "C": "fracture", "D": "normal", "E": "mass"}
GOLDS = ("pneumoperitoneum", "femur", "cardiomegaly")
SYNONYM = {"pneumoperitoneum": "gas outside the bowel lumen", "femur": "the thigh bone",
           "cardiomegaly": "a big heart"}  # fmt: skip
MCQ_PER_DIM = 6
OPEN_PER_DIM = 4


def medcmr_items(
    mcq_per_dim: int = MCQ_PER_DIM, open_per_dim: int = OPEN_PER_DIM
) -> list[dict[str, object]]:
    """The benchmark's records in Med-CMR's released schema (``sources/medcmr.py``): index
    ``100·d + k``, items ``mcq-INDEX`` / ``open-INDEX``; two questions share each image."""
    records: list[dict[str, object]] = []
    for d, dim in enumerate(DIMENSIONS):
        for k in range(mcq_per_dim):
            records.append({**_released(d * 100 + k, f"Which finding in {dim} case {k}?", "A", dim,
                                        f"dataset/imgs/img-m{d}-{k // 2}.png"), **OPTIONS})  # fmt: skip
        for k in range(open_per_dim):
            records.append(_released(d * 100 + k, f"What does {dim} image {k} show?",
                                     GOLDS[(d + k) % len(GOLDS)], dim,
                                     f"dataset/imgs/img-o{d}-{k // 2}.png"))  # fmt: skip
    return records


def _released(index: int, question: str, answer: str, dim: str, image: str) -> dict[str, object]:
    return {"index": index, "question": question, "image_path": image, "answer": answer,
            "visual_description": "", "task": dim, "subtype": "", "question type": "fixture",
            "modality": "CT", "organ system": "chest"}  # fmt: skip


def open_answer(gold: str, mode: str) -> str:
    return {"gold": gold, "synonym": SYNONYM[gold], "negated": f"no {gold}"}[mode]


def write_medcmr(
    folder: Path,
    models: dict[str, Callable[[int, int, bool], str]],
    sizes: tuple[int, int] = (MCQ_PER_DIM, OPEN_PER_DIM),
) -> dict[str, Path]:
    """The release's layout (``dataset/cmed.copy.{mcq_cate,open_taged}.cleaned.json`` and
    ``dataset/imgs/``) and one replay file per model; `models` maps a run name to
    ``answer(dimension index, k, is_open)`` → ``"right"``/``"wrong"`` (MCQ) or an open mode;
    `sizes`: MCQ and open items per dimension. ``bench`` is the folder holding ``dataset/``."""
    from source_files import write_image

    records = medcmr_items(*sizes)
    for record in records:
        write_image(folder / str(record["image_path"]))
    mcq = [r for r in records if "A" in r]
    opened = [r for r in records if "A" not in r]
    for name, rows in (("cmed.copy.mcq_cate.cleaned.json", mcq),
                       ("cmed.copy.open_taged.cleaned.json", opened)):  # fmt: skip
        (folder / "dataset" / name).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    for row in records:
        row["id"] = f"{'mcq' if 'A' in row else 'open'}-{row['index']}"

    def prediction(record: dict[str, object], answer: Callable[[int, int, bool], str]) -> str:
        is_open = "A" not in record
        d, k = divmod(int(str(record["index"])), 100)
        mode = answer(d, k, is_open)
        if is_open:
            return open_answer(str(record["answer"]), mode)
        return "A" if mode == "right" else "B"

    return {"bench": folder, **write_replays(folder, models, records, "id", prediction)}


def write_replays(
    folder: Path,
    models: dict[str, Callable[[int, int, bool], str]],
    rows: list[dict[str, object]],
    key: str,
    prediction: Callable[[dict[str, object], Callable[[int, int, bool], str]], str],
) -> dict[str, Path]:
    """One ``index, prediction`` replay file per model."""
    files = {}
    for name, answer in models.items():
        path = folder / f"{name}.csv"
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["index", "prediction"])
            writer.writerows([row[key], prediction(row, answer)] for row in rows)
        files[name] = path
    return files


def medcmr_runs(
    folder: Path, models: dict[str, Callable[[int, int, bool], str]]
) -> dict[str, Path]:
    files = write_medcmr(folder / "data", models)
    return {
        name: named_run(f"medcmr:{files['bench']}", f"replay:{files[name]}", folder / "runs", name)
        for name in models
    }


def rubric_points(answer: str, gold: str) -> dict[str, int]:
    """The loopback judge's rubric verdict (``judge_server.verdict``), by hand."""
    same = answer == gold or answer == SYNONYM[gold]
    return {"consistency": 8, "coherence": max(1, min(10, len(answer.split()))),
            "visual_accuracy": 7 if same else 3, "ground_truth_correctness": 10 if same else 1}  # fmt: skip


def rubric_score(answer: str, gold: str) -> float:
    """Σ wᵢsᵢ / (10 · Σ wᵢ) with Med-CMR's weights 1/1/4/4."""
    p = rubric_points(answer, gold)
    total = (
        p["consistency"]
        + p["coherence"]
        + 4 * p["visual_accuracy"]
        + 4 * p["ground_truth_correctness"]
    )
    return total / 100.0


# MMBU ----------------------------------------------------------------------------------------
MMBU_TASKS = ("classification", "box_classification", "mask_classification", "detection")
MMBU_PER_TASK = 6
LABELS = ("pneumoperitoneum", "femur", "cardiomegaly")
SUBMODALITIES = ("ct-abdomen", "xr-chest", "mr-knee")
BOXES = ([10, 10, 30, 30], [40, 5, 60, 25], [0, 30, 20, 50])


def mmbu_samples(per_task: int = MMBU_PER_TASK) -> list[dict[str, object]]:
    """One closed and one open row per sample (sharing ``sample_id`` and the image)."""
    rows: list[dict[str, object]] = []
    for t, task in enumerate(MMBU_TASKS):
        for k in range(per_task):
            sample = f"{task[:3]}{k}"
            common = {"task": task, "image_path": f"img/{sample}.png", "sample_id": sample,
                      "dataset": f"set{k % 2}", "modality": "CT",
                      "metadata_submodality": SUBMODALITIES[(t + k) % 3]}  # fmt: skip
            if task == "detection":
                box = BOXES[k % 3]
                rows.append({"index": f"{sample}c", "question": "Which box holds the lesion?",
                             "options": [json.dumps(b) for b in BOXES], "answer": json.dumps(box), **common})  # fmt: skip
                rows.append({"index": f"{sample}o", "question": "Where is the lesion?",
                             "answer": json.dumps(box), **common})  # fmt: skip
                continue
            gold = LABELS[(t + k) % 3]
            rows.append({"index": f"{sample}c", "question": "Which finding is shown?",
                         "options": list(LABELS), "answer": gold, **common})  # fmt: skip
            rows.append(
                {
                    "index": f"{sample}o",
                    "question": "Which finding is shown?",
                    "answer": gold,
                    **common,
                }
            )
    return rows


def mmbu_answer(row: dict[str, object], mode: str) -> str:
    """A model's answer to one row: ``right``/``wrong`` (closed, boxes) or an open mode."""
    closed = "options" in row
    if row["task"] == "detection":
        gold = json.loads(str(row["answer"]))
        wrong = next(b for b in BOXES if b != gold)
        box = gold if mode in ("right", "gold", "synonym") else wrong
        if closed:
            return "ABC"[BOXES.index(box)]
        return json.dumps(box)
    if closed:
        letter = "ABC"[LABELS.index(str(row["answer"]))]
        return letter if mode == "right" else next(c for c in "ABC" if c != letter)
    return open_answer(str(row["answer"]), mode)


def write_mmbu(
    folder: Path, models: dict[str, Callable[[int, int, bool], str]], per_task: int = MMBU_PER_TASK
) -> dict[str, Path]:
    """``mmbu.jsonl`` with one PNG per sample and a replay file per model; `models` maps a run
    name to ``answer(task index, k, is_open)`` → a mode of :func:`mmbu_answer`."""
    from source_files import write_image

    folder.mkdir(parents=True, exist_ok=True)
    rows = mmbu_samples(per_task)
    for row in rows:
        write_image(folder / str(row["image_path"]))
    bench = folder / "mmbu.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")

    def prediction(row: dict[str, object], answer: Callable[[int, int, bool], str]) -> str:
        t, k = MMBU_TASKS.index(str(row["task"])), int(str(row["sample_id"])[3:])
        return mmbu_answer(row, answer(t, k, "options" not in row))

    return {"bench": bench, **write_replays(folder, models, rows, "index", prediction)}


def mmbu_runs(folder: Path, models: dict[str, Callable[[int, int, bool], str]]) -> dict[str, Path]:
    files = write_mmbu(folder / "data", models)
    return {
        name: named_run(f"mmbu:{files['bench']}", f"replay:{files[name]}", folder / "runs", name)
        for name in models
    }


def judge_runs(runs: dict[str, Path], protocol: str, name: str) -> None:
    """Judge every run with the loopback judge (``tests/judge_server.py``) under `protocol`."""
    from typer.testing import CliRunner

    from judge_fixtures import judge_spec
    from judge_server import JudgeReplies, judge_config
    from loopback_server import serve
    from medlens.cli import app

    with serve(judge_config(JudgeReplies())) as server:
        for run in runs.values():
            result = CliRunner().invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                              "--protocol", protocol, "--name", name])  # fmt: skip
            assert result.exit_code == 0, result.output
