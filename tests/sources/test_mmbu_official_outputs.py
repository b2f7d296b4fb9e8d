"""MMBU's official files as they are (issue 30, item 5): the runner's output JSONL of a closed
task (its question with the ``" Options: …"`` suffix, per-task indices) replays against the
official TSV; a folder of per-task outputs replays against an ``mmbu:`` folder of per-task TSVs,
files matched by task name; ``export --format vlmeval`` of the run works. Real images from
SLAKE; bad folders are one line naming the file, exit 2, nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli_runs import invoke_run, named_run
from data_paths import realdata_dir

HEADER = "index\tquestion\timage_path\tdataset\tclass_label\tmodality\toptions"
OPTIONS = "A. brain B. lung C. liver"
GOLDS = ["brain", "lung", "liver", "lung"]


def official_folder(root: Path) -> Path:
    """classification_{closed,open}_VQA.tsv over four real SLAKE images, per-task indices 0–3."""
    images = sorted(
        p for p in (realdata_dir("slake") / "imgs").iterdir() if (p / "source.jpg").is_file()
    )[:4]
    for number, folder in enumerate(images):
        target = root / "images" / "classification" / f"{number}.jpg"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "source.jpg", target)
    for form, options in (("closed", OPTIONS), ("open", "")):
        rows = [f"{i}\tWhich organ is shown?\timages/classification/{i}.jpg\tSLAKE\t{gold}\tCT\t{options}"
                for i, gold in enumerate(GOLDS)]  # fmt: skip
        (root / f"classification_{form}_VQA.tsv").write_text("\n".join([HEADER, *rows]) + "\n")
    return root


def outputs(folder: Path, name: str, form: str, answers: list[str]) -> Path:
    """The runner's output JSONL of one task: the closed question as it was sent."""
    folder.mkdir(parents=True, exist_ok=True)
    question = "Which organ is shown?" + (f" Options: {OPTIONS}" if form == "closed" else "")
    rows = [{"index": i, "question": question, "image_path": f"images/classification/{i}.jpg", "dataset": "SLAKE",
             "modality": "CT", "class_label": gold, "answer": answer, **({"options": OPTIONS} if form == "closed" else {})}
            for i, (gold, answer) in enumerate(zip(GOLDS, answers, strict=True))]  # fmt: skip
    path = folder / name
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def score(run: Path) -> float:
    return float(json.loads((run / "results.json").read_text())["overall"]["score"])


def test_a_closed_task_output_replays_against_its_official_tsv(tmp_path: Path) -> None:
    root = official_folder(tmp_path / "mmbu")
    output = outputs(
        tmp_path / "out", "classification_closed_VQA.jsonl", "closed", ["A", "B", "A", "B"]
    )
    run = named_run(
        f"mmbu:{root / 'classification_closed_VQA.tsv'}",
        f"replay:{output}",
        tmp_path / "runs",
        "closed",
    )
    assert score(run) == pytest.approx(0.75)


def test_a_folder_of_task_outputs_replays_against_an_mmbu_folder_and_exports(
    tmp_path: Path,
) -> None:
    root = official_folder(tmp_path / "mmbu")
    out = tmp_path / "out"
    outputs(out, "qwen_classification_closed_VQA_results.jsonl", "closed", ["A", "B", "C", "A"])
    outputs(
        out,
        "qwen_classification_open_VQA_results.jsonl",
        "open",
        ["brain", "lung", "the liver", "spleen"],
    )
    run = named_run(f"mmbu:{root}", f"replay:{out}", tmp_path / "runs", "folder")
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 8 and not any(r.get("error") for r in records)
    by_id = {r["id"]: r["score"] for r in records}
    assert (
        by_id["classification_closed_VQA-2"] == 1.0 and by_id["classification_closed_VQA-3"] == 0.0
    )
    from typer.testing import CliRunner

    from medlens.cli import app

    exported = CliRunner().invoke(
        app, ["export", str(run), "--format", "vlmeval", "--output", str(tmp_path / "x")]
    )
    assert exported.exit_code == 0, exported.output
    import pandas as pd

    frame = pd.read_excel(next((tmp_path / "x").glob("*_exact_matching_result.xlsx")))
    assert len(frame) == 8 and set(frame["index"]) == {
        f"classification_{f}_VQA-{i}" for f in ("closed", "open") for i in range(4)
    }


@pytest.mark.parametrize(
    ("names", "said"),
    [(["classification_closed_VQA.jsonl", "classification_closed_VQA_v2.jsonl"], "a second output file for task classification_closed_VQA"),
     (["detection_grounding_closed_VQA.jsonl"], "task detection_grounding_closed_VQA is not a task of this benchmark"),
     (["predictions.jsonl"], "no MMBU task name in the file name")],
)  # fmt: skip
def test_a_bad_output_folder_is_one_line_naming_the_file(
    tmp_path: Path, names: list[str], said: str
) -> None:
    root = official_folder(tmp_path / "mmbu")
    out = tmp_path / "out"
    for name in names:
        outputs(out, name, "closed", ["A", "B", "C", "A"])
    result = invoke_run(f"mmbu:{root}", f"replay:{out}", tmp_path / "runs", "bad")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0] and str(out) in lines[0]
    assert not (tmp_path / "runs" / "bad").exists()
