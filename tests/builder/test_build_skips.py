"""The builder skips what it cannot build (and says which rows, per reason; --strict refuses),
draws distractors within a body part and modality, warns about a question that names the
answer, and never overwrites an output (build, subset) or makes a folder elsewhere unsaid."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark, write_png
from board_runs import one_error_line
from medlens.cli import app

runner = CliRunner()
ORGANS = {("CT", "abdomen"): ["liver", "kidney", "spleen", "pancreas", "stomach"],
          ("Fundus", "eye"): ["drusen", "exudate", "haemorrhage", "microaneurysm", "naevus"]}  # fmt: skip


def labels_csv(folder: Path, rows: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for row in rows:
        if not (folder / row["image"]).exists():
            write_png(folder / row["image"], len(row["image"]), size=64)
    path = folder / "labels.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["image", "label", "box", "modality", "body_part"]
        )
        writer.writeheader()
        writer.writerows(rows)
    return path


def organ_rows() -> list[dict[str, str]]:
    rows = []
    for (modality, part), labels in ORGANS.items():
        for i, label in enumerate(labels):
            rows.append({"image": f"{modality}{i}.png", "label": label, "box": "8,8,24,24",
                         "modality": modality, "body_part": part})  # fmt: skip
    return rows


def build(labels: Path, output: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(app, ["build", str(labels), "--output", str(output), *extra])
    return result.exit_code, result.output


def items(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_box_without_room_for_distractors_is_skipped_and_named(tmp_path: Path) -> None:
    rows = organ_rows()
    rows[2]["box"] = "0,0,64,64"  # fills the image: no distractor box fits
    rows[7]["box"] = "0,0,64,64"
    labels = labels_csv(tmp_path, rows)
    code, output = build(labels, tmp_path / "out" / "d.jsonl", "--task", "detect")
    assert code == 0, output
    assert len(items(tmp_path / "out" / "d.jsonl")) == len(rows) - 2
    assert "skipped 2 of 10 labels" in output
    assert "building" in output and "10/10" in output  # the progress bar, on stderr
    assert "cannot make 4 box options" in output and "rows 3, 8" in output
    result = runner.invoke(app, ["build", str(labels), "--output", str(tmp_path / "strict" / "d.jsonl"),
                                 "--task", "detect", "--strict"])  # fmt: skip
    line = one_error_line(result)
    assert "row 3" in line and "cannot make 4 box options" in line
    assert not (tmp_path / "strict").exists()


def test_a_missing_modality_under_the_full_template_is_skipped(tmp_path: Path) -> None:
    rows = organ_rows()
    rows[0]["modality"] = ""
    labels = labels_csv(tmp_path, rows)
    code, output = build(labels, tmp_path / "t.jsonl", "--granularity", "box", "--template", "full",
                         "--options", "0")  # fmt: skip
    assert code == 0, output
    assert "skipped 1 of 10 labels" in output and "needs a modality value: 1 (row 1)" in output
    assert len(items(tmp_path / "t.jsonl")) == len(rows) - 1
    code, output = build(labels, tmp_path / "s.jsonl", "--granularity", "box", "--template",
                         "full", "--options", "0", "--strict")  # fmt: skip
    assert code == 2 and "needs a modality value" in output


def test_distractors_come_from_the_same_body_part_and_modality(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, organ_rows())
    code, output = build(labels, tmp_path / "b.jsonl", "--granularity", "box", "--options", "4")
    assert code == 0, output
    for item in items(tmp_path / "b.jsonl"):
        meta = item["meta"]
        pool = ORGANS[(meta["modality"], meta["body_part"])]  # type: ignore[index]
        assert set(item["options"].values()) <= set(pool), item  # type: ignore[union-attr]


def test_a_question_naming_the_label_on_closed_items_is_a_lint_warning(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, organ_rows())
    code, output = build(labels, tmp_path / "q.jsonl", "--granularity", "box",
                         "--question", "Is the {label} marked?")  # fmt: skip
    assert code == 0
    assert "warning: --question contains {label}" in output and "gives the answer away" in output
    code, output = build(labels, tmp_path / "q2.jsonl", "--granularity", "box", "--options", "0",
                         "--question", "Which organ ({label}) is marked?")  # fmt: skip
    assert "{label}" in output  # open items too: the gold is in the question


def test_build_and_subset_refuse_to_overwrite_without_force(tmp_path: Path) -> None:
    labels = labels_csv(tmp_path, organ_rows())
    output = tmp_path / "b.jsonl"
    assert build(labels, output, "--granularity", "box")[0] == 0
    before = output.read_bytes()
    line = one_error_line(runner.invoke(app, ["build", str(labels), "--output", str(output),
                                              "--granularity", "box", "--seed", "3"]))  # fmt: skip
    assert "exists" in line and "--force" in line and output.read_bytes() == before
    assert build(labels, output, "--granularity", "box", "--seed", "3", "--force")[0] == 0
    assert output.read_bytes() != before
    bench = write_jsonl_benchmark(tmp_path / "src", 10)
    target = tmp_path / "sub" / "s.jsonl"
    args = ["subset", f"jsonl:{bench}", "--output", str(target), "--sample", "4"]
    assert runner.invoke(app, args).exit_code == 0
    line = one_error_line(runner.invoke(app, args))
    assert "exists" in line and "--force" in line
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0


def test_a_new_folder_outside_the_working_tree_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    labels = labels_csv(tmp_path / "data", organ_rows())
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    code, output = build(labels, Path("inside") / "b.jsonl", "--granularity", "box")
    assert code == 0 and "created" not in output
    outside = tmp_path / "elsewhere" / "deep" / "b.jsonl"
    code, output = build(labels, outside, "--granularity", "box")
    assert code == 0 and f"created the folder {outside.parent}" in output
