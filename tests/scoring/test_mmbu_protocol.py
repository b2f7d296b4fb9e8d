"""MMBU as its paper scores it, on a fixture in the public ImageFolder layout (metadata.jsonl
with ``file_name`` and ``image_path``): loader, micro-F1 per task with CIs and chance, closed
detection over candidate boxes, multi-box F1, and the closed−open Δ paired per sample."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from PIL import Image
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.api import load_benchmark
from medlens.cli import app

LIVER = {"question": "Which organ is shown?", "options": ["Kidney", "Liver", "Spleen", "Lung"]}


def _image(root: Path, relative: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), (40, 90, 160)).save(path)


def write_release(root: Path) -> list[dict[str, object]]:
    """Two classification samples (closed + open form each, two templates), one mask-anchored
    open item, one closed and one open detection item on the same image."""
    rows: list[dict[str, object]] = []
    for n, (organ, template) in enumerate([("Liver", "No Context"), ("Spleen", "Modality")]):
        relative = f"images/classification/ct_{n}.png"
        _image(root, relative)
        common = {"file_name": relative, "image_path": relative, "task": "classification",
                  "template": template, "dataset": "AMOS", "modality": "CT"}  # fmt: skip
        rows.append({"index": f"c{n}", **LIVER, "answer": organ, **common})
        rows.append({"index": f"o{n}", "question": "Which organ is shown?", "answer": organ,
                     **common})  # fmt: skip
    _image(root, "images/segmentation/mr_0.png")
    rows.append({"index": "m0", "question": "What is inside the mask?", "answer": "Liver",
                 "file_name": "images/segmentation/mr_0.png",
                 "image_path": "images/segmentation/mr_0.png", "task": "mask_classification",
                 "template": "Full Context", "dataset": "CHAOS", "modality": "MRI"})  # fmt: skip
    _image(root, "images/detection/xr_0.png")
    boxes = [[10, 10, 30, 30], [5, 20, 25, 40], [30, 5, 60, 25], [0, 0, 12, 12]]
    detection = {"file_name": "images/detection/xr_0.png",
                 "image_path": "images/detection/xr_0.png", "task": "detection",
                 "template": "No Context", "dataset": "VinDr", "modality": "X-ray"}  # fmt: skip
    rows.append({"index": "d0", "question": "Which box holds the nodule?",
                 "options": [json.dumps(b) for b in boxes], "answer": "[30, 5, 60, 25]",
                 **detection})  # fmt: skip
    rows.append({"index": "d1", "question": "Give the boxes of every nodule.",
                 "answer": [[30, 5, 60, 25], [0, 0, 12, 12]], **detection})  # fmt: skip
    (root / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return rows


def test_imagefolder_release_is_read(tmp_path: Path) -> None:
    write_release(tmp_path)
    benchmark = load_benchmark(f"mmbu:{tmp_path}")
    items = {item.id: item for item in benchmark.items()}
    assert "ImageFolder" in benchmark.description
    assert (items["c0"].kind, items["c0"].answer, items["c0"].meta["answer_type"]) == (
        "choice", "B", "closed",
    )  # fmt: skip
    assert (items["o1"].kind, items["o1"].answer) == ("open", "Spleen")
    assert [items[i].meta["template"] for i in ("c0", "c1", "m0")] == ["none", "modality", "full"]
    assert items["m0"].meta["granularity"] == "mask"
    assert (items["d0"].kind, items["d0"].answer) == ("choice", "C")  # candidate boxes
    assert items["d1"].kind == "detect" and len(items["d1"].answer) == 2  # type: ignore[arg-type]
    assert items["c0"].meta["image_id"] == "images/classification/ct_0.png"
    assert items["c0"].images[0].path.endswith("ct_0.png")
    assert [i.id for i in load_benchmark(f"mmbu:{tmp_path}?template=modality").items()] == [
        "c1", "o1",
    ]  # fmt: skip


def _results(run: Path) -> dict[str, object]:
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def test_oracle_scores_every_task_at_one(tmp_path: Path) -> None:
    write_release(tmp_path / "mmbu")
    run = named_run(f"mmbu:{tmp_path / 'mmbu'}", "oracle", tmp_path / "runs", "oracle")
    section = _results(run)["mmbu"]
    assert isinstance(section, dict)
    tasks = section["tasks"]
    assert tasks["classification"]["closed"]["value"] == 1.0
    assert tasks["classification"]["closed"]["chance"] == pytest.approx(0.25)
    assert tasks["classification"]["open"]["chance"] is None
    assert tasks["detection"]["closed"]["chance"] == pytest.approx(0.25)
    assert tasks["detection"]["open"]["value"] == 1.0
    assert tasks["mask_classification"]["open"]["n"] == 1
    delta = section["paired_delta"]
    assert delta["n_pairs"] == 3 and delta["delta"] == 0.0  # 2 classification + 1 detection
    assert delta["unpaired"] == 1  # the mask item has no closed form


def _replay(path: Path, predictions: dict[str, str]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        writer.writerows(predictions.items())
    return path


def test_micro_f1_multi_box_and_paired_delta(tmp_path: Path) -> None:
    write_release(tmp_path / "mmbu")
    predictions = {
        "c0": "B", "o0": "The image shows the kidney.",  # closed right, open wrong
        "c1": "C", "o1": "Spleen",  # both right
        "m0": "Liver",
        "d0": "A",  # wrong candidate box
        "d1": "[[31, 5, 60, 25], [40, 40, 50, 48], [100, 100, 120, 120]]",  # 1 hit of 3, 2 gold
    }  # fmt: skip
    replay = _replay(tmp_path / "p.csv", predictions)
    run = named_run(f"mmbu:{tmp_path / 'mmbu'}", f"replay:{replay}", tmp_path / "runs", "r")
    results = _results(run)
    section = results["mmbu"]
    assert isinstance(section, dict)
    tasks = section["tasks"]
    assert tasks["classification"]["open"]["value"] == pytest.approx(0.5)
    assert tasks["detection"]["closed"]["value"] == 0.0
    precision, recall = 1 / 3, 1 / 2
    f1 = 2 * precision * recall / (precision + recall)
    assert tasks["detection"]["open"]["value"] == pytest.approx(f1)
    # one image: a corpus statistic has no interval across images, and says so
    assert tasks["detection"]["open"]["ci"] is None
    assert "too few" in tasks["detection"]["open"]["note"]
    delta = section["paired_delta"]
    # pairs: (c0 1, o0 0), (c1 1, o1 1), (d0 0, d1 hit50 1: first box IoU ≥ 0.5)
    assert delta["n_pairs"] == 3
    assert delta["delta"] == pytest.approx((1 + 0 - 1) / 3)
    gap = results["closed_open"]["overall"]  # one figure wherever the Δ appears
    assert gap["paired"] and gap["n_pairs"] == 3
    assert gap["delta"] == delta["delta"] and gap["delta_ci"] == delta["delta_ci"]
    text = CliRunner().invoke(app, ["report", str(run)]).output
    assert "MMBU micro-F1 per task" in text and "closed−open Δ paired per sample" in text


def test_missing_field_is_one_line_exit_2(tmp_path: Path) -> None:
    rows = write_release(tmp_path / "mmbu")
    del rows[2]["task"]
    (tmp_path / "mmbu" / "metadata.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke_run(f"mmbu:{tmp_path / 'mmbu'}", "oracle", tmp_path / "runs", "bad")
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "metadata.jsonl" in lines[0] and "line 3, field 'task'" in lines[0]
    assert not (tmp_path / "runs" / "bad").exists()
