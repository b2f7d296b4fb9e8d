"""Med-CMR read through its released schema exactly (issue 48, item 4): the unpacked release
(``dataset/cmed.copy.mcq_cate.cleaned.json``, ``dataset/cmed.copy.open_taged.cleaned.json``,
``dataset/imgs/``) loads as it is; a file whose records lack a released field — a renamed one
included — is one line naming the file, the record and the field, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runs import invoke_run
from data_paths import items_of
from medlens.core.errors import InputError
from source_files import write_image

MCQ = "cmed.copy.mcq_cate.cleaned.json"
OPEN = "cmed.copy.open_taged.cleaned.json"


def released(index: int, task: str, answer: str, **extra: str) -> dict[str, object]:
    return {"index": index, "question": f"Question {index}?", "image_path": f"dataset/imgs/{index}.png",
            "answer": answer, "visual_description": "A round opacity in the left lower lobe.",
            "task": task, "subtype": "nodule", "question type": "diagnosis", "modality": "CT",
            "organ system": "Respiratory", **extra}  # fmt: skip


def release(root: Path, mcq: list[dict[str, object]], opened: list[dict[str, object]]) -> Path:
    for record in (*mcq, *opened):
        write_image(root / str(record["image_path"]))
    (root / "dataset" / MCQ).write_text(json.dumps(mcq), encoding="utf-8")
    (root / "dataset" / OPEN).write_text(json.dumps(opened), encoding="utf-8")
    return root


OPTIONS = {"A": "nodule", "B": "effusion", "C": "fracture", "D": "normal", "E": "mass"}


def test_the_unpacked_release_loads_as_released(tmp_path: Path) -> None:
    root = release(
        tmp_path / "Med-CMR",
        [released(0, "SOD", "A", **OPTIONS), released(1, "Long-Tail Generalization", "C", **OPTIONS)],
        [released(0, "causal reasoning", "A benign nodule."), released(7, "Multi-Source Integration (MSI)", "x")],
    )  # fmt: skip
    items = items_of(f"medcmr:{root}")
    assert [(i.id, i.kind, i.answer, i.meta["dimension"]) for i in items] == [
        ("mcq-0", "choice", "A", "SOD"),
        ("mcq-1", "choice", "C", "LTG"),
        ("open-0", "open", "A benign nodule.", "CR"),
        ("open-7", "open", "x", "MSI"),
    ]
    first = items[0]
    assert first.options == OPTIONS and first.images[0].name == "dataset/imgs/0.png"
    assert first.meta["body_system"] == "Respiratory" and first.meta["question_type"] == "diagnosis"
    assert (
        first.meta["subtype"] == "nodule" and "task" not in first.meta and "index" not in first.meta
    )
    assert all("visual_description" not in i.meta and "answer" not in i.meta for i in items)
    assert [i.id for i in items_of(f"medcmr:{root / 'dataset'}?kind=open")] == ["open-0", "open-7"]
    assert [i.id for i in items_of(f"medcmr:{root / 'dataset' / MCQ}")] == ["mcq-0", "mcq-1"]


@pytest.mark.parametrize(
    ("renamed", "form", "said"),
    [("organ system", "organ_system", "field 'organ system': missing (this record has 'organ_system': not the released name)"),
     ("question type", "question_type", "field 'question type': missing (this record has 'question_type'"),
     ("task", "dimension", "field 'task': missing;"),
     ("C", "option_C", "field 'C': missing;")],
)  # fmt: skip
def test_a_renamed_field_is_one_line_naming_file_record_and_field(
    tmp_path: Path, renamed: str, form: str, said: str
) -> None:
    mcq = [released(0, "SOD", "A", **OPTIONS), released(1, "FDD", "B", **OPTIONS)]
    mcq[1][form] = mcq[1].pop(renamed)
    root = release(tmp_path / "data", mcq, [released(0, "CR", "x")])
    result = invoke_run(f"medcmr:{root}", "first", tmp_path / "runs", "renamed")
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert str(root / "dataset" / MCQ) in lines[0] and f"record 1, {said}" in lines[0]
    assert not (tmp_path / "runs" / "renamed").exists()


def test_the_guessed_aliases_of_before_are_refused(tmp_path: Path) -> None:
    write_image(tmp_path / "i.png")
    path = tmp_path / "mine.jsonl"
    path.write_text(json.dumps({"id": "q1", "query": "Q?", "gt_answer": "x", "capability": "LTG",
                                "images": ["i.png"]}) + "\n")  # fmt: skip
    with pytest.raises(InputError, match=r"line 1, field 'index': missing; Med-CMR's released"):
        items_of(f"medcmr:{path}")
    path.write_text(json.dumps(released(3, "XYZ", "x")) + "\n")
    write_image(tmp_path / "dataset" / "imgs" / "3.png")
    with pytest.raises(InputError, match=r"field 'task': 'XYZ' is none of Med-CMR's dimensions"):
        items_of(f"medcmr:{path}")
    (tmp_path / "y.tsv").write_text("index\tquestion\n")
    with pytest.raises(InputError, match="unsupported file type"):
        items_of(f"medcmr:{tmp_path / 'y.tsv'}")
