"""``medlens check``: patient-level leakage across splits, the gold-label distribution and rare
classes (< 3%), on jsonl fixtures and the real VQA-RAD and PubMedQA sets."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from data_paths import realdata_dir
from medlens.api import load_benchmark
from medlens.checks.check import run_checks
from medlens.checks.protocol import gold_label, patient_ids
from medlens.cli import app
from medlens.core.items import Item


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def classify_rows(labels: list[str], split: str, patients: list[str]) -> list[dict[str, object]]:
    return [
        {"id": f"{split}{i}", "question": "Which lesion?", "kind": "classify", "answer": label,
         "meta": {"labels": "nevus|melanoma|bcc", "split": split, "patient_id": patient}}
        for i, (label, patient) in enumerate(zip(labels, patients, strict=True))
    ]  # fmt: skip


def check_json(spec: str) -> dict[str, dict[str, object]]:
    result = CliRunner().invoke(app, ["check", spec, "--json"])
    assert result.exit_code in (0, 1), result.output
    return {check["name"]: check for check in json.loads(result.stdout)["checks"]}


def test_patient_ids_are_read_from_any_spelling() -> None:
    item = Item("i", "q", "open", answer="x",
                meta={"Patient ID": "P7", "subject_id": "10001", "study_id": "s5", "lesion": "l"})  # fmt: skip
    assert patient_ids(item) == {("patient_id", "P7"), ("subject_id", "10001"), ("study_id", "s5")}


def test_the_same_patient_in_two_splits_is_flagged(tmp_path: Path) -> None:
    rows = classify_rows(["nevus"] * 10, "train", [f"P{i}" for i in range(10)])
    rows += classify_rows(["melanoma"] * 10, "test", [f"P{i}" for i in range(8, 18)])
    checks = check_json(f"jsonl:{write_jsonl(tmp_path / 'b.jsonl', rows)}")
    leakage = checks["patient_leakage"]
    assert leakage["status"] == "warn"
    assert leakage["data"]["shared"] == {"test/train": 2}  # type: ignore[index]
    assert any("patient_id=P8" in line for line in leakage["details"])  # type: ignore[union-attr]


def test_patients_are_compared_with_the_other_splits(tmp_path: Path) -> None:
    test = write_jsonl(
        tmp_path / "test.jsonl", classify_rows(["nevus"] * 4, "test", ["A", "B", "C", "D"])
    )
    train = write_jsonl(
        tmp_path / "train.jsonl", classify_rows(["bcc"] * 3, "train", ["X", "D", "Y"])
    )
    clean = write_jsonl(tmp_path / "val.jsonl", classify_rows(["bcc"] * 2, "val", ["V", "W"]))
    mine = load_benchmark(f"jsonl:{test}")
    report = run_checks(mine, others=[load_benchmark(f"jsonl:{train}")])
    leakage = next(c for c in report.checks if c.name == "patient_leakage")
    assert leakage.status == "warn" and leakage.data["shared"] == {"test/train": 1}
    report = run_checks(mine, others=[load_benchmark(f"jsonl:{clean}")])
    leakage = next(c for c in report.checks if c.name == "patient_leakage")
    assert leakage.status == "pass"


def test_gold_label_distribution_and_rare_classes(tmp_path: Path) -> None:
    labels = ["nevus"] * 30 + ["melanoma"] * 9 + ["bcc"]  # bcc: 1/40 = 2.5% < 3%
    rows = classify_rows(labels, "test", [f"P{i}" for i in range(40)])
    checks = check_json(f"jsonl:{write_jsonl(tmp_path / 'c.jsonl', rows)}")
    gold = checks["gold_labels"]
    assert gold["status"] == "info"
    assert gold["data"]["classify"] == {"nevus": 30, "melanoma": 9, "bcc": 1}  # type: ignore[index]
    assert "nevus 30 (75.0%)" in gold["details"][0]  # type: ignore[index]
    rare = checks["rare_classes"]
    assert rare["status"] == "warn" and rare["data"]["rare"] == {"classify": {"bcc": 1}}  # type: ignore[index]
    assert checks["patient_leakage"]["status"] == "pass"


def test_three_percent_is_not_rare(tmp_path: Path) -> None:
    labels = ["nevus"] * 97 + ["bcc"] * 3  # exactly 3%
    rows = classify_rows(labels, "test", [f"P{i}" for i in range(100)])
    checks = check_json(f"jsonl:{write_jsonl(tmp_path / 'd.jsonl', rows)}")
    assert checks["rare_classes"]["status"] == "pass"


def test_real_sets_report_their_gold_labels() -> None:
    checks = check_json(f"pubmedqa:{realdata_dir('pubmedqa')}")
    assert checks["gold_labels"]["data"]["yes_no"] == {"yes": 276, "no": 169, "maybe": 55}  # type: ignore[index]
    assert checks["rare_classes"]["status"] == "pass"
    assert checks["patient_leakage"]["status"] == "info"  # PubMedQA has no patient ids
    checks = check_json(f"vqa-rad:{realdata_dir('vqa_rad')}")
    assert "open" in checks["gold_labels"]["details"][-1]  # type: ignore[index]


def test_choice_gold_is_the_letter() -> None:
    item = Item("c", "q", "choice", options={"A": "x", "B": "y"}, answer="b")
    assert gold_label(item) == "B"
