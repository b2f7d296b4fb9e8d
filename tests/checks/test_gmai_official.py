"""GMAI-MMBench's official files (issue 23): ``check`` tells the official VAL file and the 11
TEST parts apart by MD5 and reports rows and distinct tasks / departments / modalities against
the published 18 / 18 / 38; ``gmai:DIR`` reads the 11 parts as the TEST split; ``export
--format vlmeval`` names its files as VLMEvalKit does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app
from medlens.sources import gmai_files
from tiny_images import B64

HEADER = ["index", "question", "A", "B", "image", "clinical VQA task", "department",
          "perceptual granularity", "modality"]  # fmt: skip


def write_part(path: Path, first: int, rows: int) -> None:
    lines = ["\t".join(HEADER)]
    for n in range(first, first + rows):
        lines.append("\t".join([str(n), f"Question {n}?", "yes", "no", B64, f"task {n % 18}",
                                f"dept {n % 18}", "Image Level", f"mod {n % 38}"]))  # fmt: skip
    path.write_text("\n".join(lines) + "\n")


def _check(spec: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["check", spec, "--json"])
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_eleven_test_parts_are_read_and_recognised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "GMAI-MMBench"
    folder.mkdir()
    for part in range(1, 12):
        write_part(folder / f"GMAI_mm_bench_TEST_part_{part}.tsv", 40 * part, 40)
    official = {gmai_files.file_md5(p): p.stem for p in gmai_files.test_parts(folder)}
    monkeypatch.setattr(gmai_files, "OFFICIAL_MD5", official)
    monkeypatch.setattr("medlens.checks.gmai_official.OFFICIAL_MD5", official)
    report = _check(f"gmai:{folder}")
    line = next(c for c in report["checks"] if c["name"] == "gmai_official")
    assert line["status"] == "pass", line
    assert line["summary"].startswith("the official TEST split (11 parts, MD5s match): 440 rows")
    assert line["data"]["counts"] == {"task": 18, "department": 18, "modality": 38}
    run = named_run(f"gmai:{folder}", "first", tmp_path / "runs", "test")
    results = json.loads((run / "results.json").read_text())
    assert results["counts"]["items"] == 440 and results["has_answers"] is False


def test_a_part_alone_and_an_unofficial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    part = tmp_path / "GMAI_mm_bench_TEST_part_3.tsv"
    write_part(part, 0, 20)
    report = _check(f"gmai:{part}")
    line = next(c for c in report["checks"] if c["name"] == "gmai_official")
    assert line["status"] == "warn" and "not the official" in line["summary"]
    monkeypatch.setattr(
        "medlens.checks.gmai_official.OFFICIAL_MD5", {gmai_files.file_md5(part): part.stem}
    )
    report = _check(f"gmai:{part}")
    line = next(c for c in report["checks"] if c["name"] == "gmai_official")
    assert line["status"] == "info"
    assert line["summary"].startswith("official TEST part 3 of 11; 20 rows")
    assert (
        "tasks / departments / modalities 18 / 18 / 20 (published 18 / 18 / 38)" in line["summary"]
    )


def test_missing_parts_are_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "parts"
    folder.mkdir()
    write_part(folder / "GMAI_mm_bench_TEST_part_1.tsv", 0, 5)
    result = CliRunner().invoke(app, ["check", f"gmai:{folder}"])
    assert result.exit_code == 2
    assert "missing TEST parts: GMAI_mm_bench_TEST_part_2.tsv" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_the_official_val_md5_is_vlmevalkits() -> None:
    assert gmai_files.OFFICIAL_MD5["254bd581627866f1c499d3d6b4422324"] == "GMAI-MMBench_VAL"
    assert len(gmai_files.OFFICIAL_MD5) == 12


def test_export_names_files_as_vlmevalkit(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI-MMBench_VAL.tsv"
    lines = ["\t".join([*HEADER, "answer"])]
    for n in range(6):
        lines.append("\t".join([str(n), f"Q {n}?", "yes", "no", B64, "task a", "dept b",
                                "Image Level", "CT", "A"]))  # fmt: skip
    tsv.write_text("\n".join(lines) + "\n")
    run = named_run(f"gmai:{tsv}", "first", tmp_path / "runs", "mymodel", "--extract", "vlmeval")
    out = tmp_path / "export"
    result = CliRunner().invoke(app, ["export", str(run), "--format", "vlmeval", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "mymodel_GMAI-MMBench_VAL_acc.csv",
        "mymodel_GMAI-MMBench_VAL_clinical vqa task_acc.csv",
        "mymodel_GMAI-MMBench_VAL_department_acc.csv",
        "mymodel_GMAI-MMBench_VAL_exact_matching_result.xlsx",
        "mymodel_GMAI-MMBench_VAL_perceptual granularity_acc.csv",
    ]
