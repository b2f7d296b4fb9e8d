"""MMBU's files under the names its official code gives them (issue 48, item 2): every released
name maps to its task; a released data root (``final_cls/``, ``final_det/``, ``final_seg/``)
loads as it is and the runner's per-task outputs replay against it; two releases of one task
side by side are one line naming both files, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_runs import invoke_run, named_run
from medlens.sources.mmbu_names import released_task
from medlens.sources.mmbu_official import official_task
from mmbu_release import RELEASE, released_root

RELEASED = {
    # configs/all_tasks.yaml (3aab73e), README.md, src/results/check_results.py
    "final_subsampled_cls_closed_12_29_25": ("classification_closed_VQA", "classification"),
    "final_subsampled_cls_open_11_30_25": ("classification_open_VQA", "classification"),
    "final_subsampled_det_guess_bbox_closed_12_29-v2": ("detection_guess_bbox_closed_VQA", "detection"),
    "final_subsampled_det_guess_bbox_open_12_29": ("detection_guess_bbox_open_VQA", "detection"),
    "final_subsampled_det_grounding_open_12_15": ("detection_grounding_open_VQA", "box_classification"),
    "final_subsampled_det_grounding_closed": ("detection_grounding_closed_VQA", "box_classification"),
    "final_subsampled_seg_grounding_closed_12_29": ("segmentation_grounding_closed_VQA", "mask_classification"),
    "final_subsampled_seg_guess_mask_open_12_15": ("segmentation_guess_bbox_open_VQA", "detection"),
    "final_subsampled_seg_guess_mask_closed_12_29": ("segmentation_guess_bbox_closed_VQA", "detection"),
    # src/dataset_check/test_dataset.py, configs/tasks.yaml (10f051a)
    "final_subsampled_cls_closed_1_13_v2": ("classification_closed_VQA", "classification"),
    "final_subsampled_cls_open_1_13_v3": ("classification_open_VQA", "classification"),
    "final_subsampled_det_guess_bbox_open_1_12_v2": ("detection_guess_bbox_open_VQA", "detection"),
    "final_subsampled_seg_grounding_open_1_13_v2": ("segmentation_grounding_open_VQA", "mask_classification"),
    "mmbu_detection_guess_bbox_open_VQA_cot_final": ("detection_guess_bbox_open_VQA", "detection"),
    # task names, chain-of-thought task names and inference TSVs, evaluation-split ids
    "classification_closed_VQA": ("classification_closed_VQA", "classification"),
    "segmentation_grounding_open_VQA_cot": ("segmentation_grounding_open_VQA", "mask_classification"),
    "cls_closed": ("classification_closed_VQA", "classification"),
    "det_grounding_open": ("detection_grounding_open_VQA", "box_classification"),
    "fg_seg_open": ("segmentation_grounding_open_VQA", "mask_classification"),
    "obj_det_open": ("detection_guess_bbox_open_VQA", "detection"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(RELEASED))
def test_every_released_name_is_its_task(name: str) -> None:
    official, task = RELEASED[name]
    form = "closed" if "_closed_" in official else "open"
    assert released_task(name) == (official, form)
    assert official_task(name) == (task, form)


@pytest.mark.parametrize(
    "name", ["final_subsampled_cls", "cls_closed_extra", "classify_open", "results"]
)
def test_other_names_are_no_task(name: str) -> None:
    assert released_task(name) is None


def runner_output(folder: Path, task: str, options: str, answers: list[str]) -> None:
    """The official runner's output file ``{model}_{task}.jsonl`` (``src/run_vlm_eval.py``)."""
    folder.mkdir(parents=True, exist_ok=True)
    question = "Which organ is shown?" + (f" Options: {options}" if options else "")
    rows = [{"index": i, "question": question, "image_path": f"images/{i}.jpg", "dataset": "SLAKE",
             "modality": "CT", "class_label": "x", "answer": answer} for i, answer in enumerate(answers)]  # fmt: skip
    name = f"Qwen2.5-VL-7B-Instruct_{task}.jsonl"  # model_name.split("/")[-1]
    (folder / name).write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_a_released_data_root_replays_the_runners_outputs_under_their_names(
    tmp_path: Path,
) -> None:
    root = released_root(tmp_path / "subsampled_mmbu_data")
    out = tmp_path / "results"
    answers = {
        "classification_closed_VQA": ["A", "B", "A", "B"],  # 3 of 4 right (golds A B C B)
        "classification_open_VQA": ["brain", "lung", "the liver", "spleen"],  # 3 of 4
        "detection_grounding_closed_VQA": ["A", "B", "C", "B"],  # 4 of 4
        "detection_guess_bbox_closed_VQA": ["C", "C", "A", "C"],  # 3 of 4
        "segmentation_grounding_open_VQA": ["brain", "brain", "brain", "brain"],  # 1 of 4
    }
    for task, options in RELEASE.values():
        runner_output(out, task + ("_cot" if task.startswith("segmentation") else ""), options,
                      answers[task])  # fmt: skip
    run = named_run(f"mmbu:{root}", f"replay:{out}", tmp_path / "runs", "released")
    records = {
        json.loads(x)["id"]: json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()
    }
    assert len(records) == 20 and not any(r.get("error") for r in records.values())
    assert records["final_subsampled_det_guess_bbox_closed_12_29-v2-3"]["score"] == 1.0
    assert records["final_subsampled_det_guess_bbox_closed_12_29-v2-2"]["score"] == 0.0
    results = json.loads((run / "results.json").read_text())
    tasks = {v: c["n"] for v, c in results["by"]["task"].items()}
    assert tasks == {"classification": 8, "box_classification": 4, "detection": 4,
                     "mask_classification": 4}  # fmt: skip
    assert results["overall"]["score"] == pytest.approx(14 / 20)


def test_two_releases_of_one_task_side_by_side_are_one_line_naming_both(tmp_path: Path) -> None:
    root = released_root(tmp_path / "data")
    shutil.copyfile(
        root / "final_cls" / "final_subsampled_cls_closed_1_13_v2.tsv",
        root / "final_cls" / "final_subsampled_cls_closed_1_13_v3.tsv",
    )
    result = invoke_run(f"mmbu:{root}", "first", tmp_path / "runs", "two")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1
    assert "final_subsampled_cls_closed_1_13_v3.tsv" in lines[0]
    assert "a second file of task classification_closed_VQA" in lines[0]
    assert "final_cls/final_subsampled_cls_closed_1_13_v2.tsv" in lines[0]
    assert not (tmp_path / "runs" / "two").exists()
