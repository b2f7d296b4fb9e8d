"""The rest of issue 23's reading backlog: MedMCQA's official test as an inference-only split,
MIMIC-CXR's normal/abnormal view, CBIS-DDSM's three classes, `extract --kind open`, and worst
cells ranked over the benchmark's own axes."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import items_of
from medlens.cli import app
from tiny_images import PNG


def _csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_medmcqa_test_is_an_inference_only_split(tmp_path: Path) -> None:
    rows = [{"id": f"t{n}", "question": f"Question {n}?", "opa": "a", "opb": "b", "opc": "c",
             "opd": "d", "subject_name": "Anatomy", "choice_type": "single"} for n in range(3)]  # fmt: skip
    (tmp_path / "test.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    items = items_of(f"medmcqa:{tmp_path}?split=test")
    assert [(i.kind, i.answer, i.meta["split"]) for i in items] == [("choice", None, "test")] * 3
    assert items_of(f"medmcqa:{tmp_path / 'test.json'}")[0].answer is None
    run = named_run(f"medmcqa:{tmp_path}?split=test", "first", tmp_path / "runs", "t")
    results = json.loads((run / "results.json").read_text())
    assert results["has_answers"] is False
    assert "withheld" in results["no_answers_reason"]


CHEXPERT = ["subject_id", "study_id", "Atelectasis", "Cardiomegaly", "No Finding",
            "Pleural Effusion", "Support Devices"]  # fmt: skip


def test_mimic_cxr_normal_abnormal_view(tmp_path: Path) -> None:
    studies = [("50000001", "10000001", ["", "", "1.0", "", "1.0"]),  # normal, a device
               ("50000002", "10000002", ["", "1.0", "", "-1.0", ""]),  # cardiomegaly
               ("50000003", "10000003", ["-1.0", "", "", "", ""])]  # only uncertain: left out  # fmt: skip
    split = []
    for n, (study, subject, _) in enumerate(studies):
        image = tmp_path / "files" / f"p{subject[:2]}" / f"p{subject}" / f"s{study}" / f"d{n}.jpg"
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(PNG)
        split.append([f"d{n}", study, subject, "test"])
    _csv(
        tmp_path / "mimic-cxr-2.0.0-split.csv",
        ["dicom_id", "study_id", "subject_id", "split"],
        split,
    )
    _csv(tmp_path / "mimic-cxr-2.0.0-chexpert.csv", CHEXPERT,
         [[subject, study, *values] for study, subject, values in studies])  # fmt: skip
    items = items_of(f"mimic-cxr:{tmp_path}?task=normal")
    assert [(i.id, i.kind, i.answer) for i in items] == [
        ("s50000001", "classify", "normal"), ("s50000002", "classify", "abnormal")
    ]  # fmt: skip
    assert items[0].meta["labels"] == "normal|abnormal"
    run = named_run(f"mimic-cxr:{tmp_path}?task=normal", "oracle", tmp_path / "runs", "n")
    assert json.loads((run / "results.json").read_text())["overall"]["score"] == 1.0


def test_cbis_ddsm_three_classes(tmp_path: Path) -> None:
    from pydicom.data import get_testdata_file

    header = ["patient_id", "left or right breast", "image view", "abnormality id",
              "abnormality type", "assessment", "pathology", "image file path"]  # fmt: skip
    rows = [["P_1", "LEFT", "CC", "1", "mass", "5", "MALIGNANT", "a/000000.dcm"],
            ["P_2", "RIGHT", "MLO", "1", "mass", "3", "BENIGN", "b/000000.dcm"],
            ["P_3", "LEFT", "CC", "1", "mass", "2", "BENIGN_WITHOUT_CALLBACK", "c/000000.dcm"]]  # fmt: skip
    for row in rows:
        (tmp_path / row[-1]).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(str(get_testdata_file("CT_small.dcm")), tmp_path / row[-1])
    _csv(tmp_path / "mass_case_description_test_set.csv", header, rows)
    two = items_of(f"cbis-ddsm:{tmp_path}?abnormality=mass")
    three = items_of(f"cbis-ddsm:{tmp_path}?abnormality=mass&classes=3")
    assert [i.answer for i in two] == ["malignant", "benign", "benign"]
    assert [i.answer for i in three] == ["malignant", "benign", "benign without callback"]
    assert three[0].meta["labels"] == "benign|benign without callback|malignant"
    assert "benign without callback" in three[0].question


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"output": "The image shows free air.", "gold": "free air", "question": "What is seen?"},
         {"answer": "The image shows free air", "score": 1.0, "contains": 1.0}),
        ({"output": "free air or fluid", "gold": "free air"},
         {"answer": "free air or fluid", "score": 0.0, "contains": 1.0}),
        ({"output": "Answer: liver"}, {"answer": "liver", "method": "answer_phrase"}),
    ],
)  # fmt: skip
def test_extract_kind_open(line: dict[str, str], expected: dict[str, object]) -> None:
    result = CliRunner().invoke(app, ["extract", "--kind", "open"], input=json.dumps(line) + "\n")
    assert result.exit_code == 0, result.output
    found = json.loads(result.stdout)
    assert {key: found[key] for key in expected} == expected


def test_extract_reads_yes_no_against_a_given_question() -> None:
    line = {"output": "There is no abnormality.", "question": "Does the liver look normal?"}
    result = CliRunner().invoke(app, ["extract", "--kind", "yes_no"], input=json.dumps(line))
    assert json.loads(result.stdout)["answer"] == "yes"


def test_worst_cells_rank_the_benchmarks_own_axes() -> None:
    from medlens.report.sections import AxisRow, worst_cell_axes

    def rows(n: int) -> list[AxisRow]:
        return [AxisRow(str(i), 60, 0.5, None, None, None, 0.0, 0.0, 0.0, 10) for i in range(n)]

    slake = {"modality": rows(3), "answer_type": rows(2), "base_type": rows(2),
             "content_type": rows(10), "kind": rows(2), "location": rows(5)}  # fmt: skip
    assert worst_cell_axes(slake) == ["modality", "base_type", "content_type", "location"]
    pathvqa = {"modality": rows(1), "answer_type": rows(2), "question_type": rows(5)}
    assert worst_cell_axes(pathvqa) == ["modality", "question_type", "answer_type"]
    gmai = {a: rows(3) for a in ("granularity", "department", "task", "modality", "category")}
    assert worst_cell_axes(gmai) == ["granularity", "department", "task", "modality"]
