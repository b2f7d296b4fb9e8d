"""`medlens check`: passes on every real data set, fails naming the check on broken copies."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import invoke_run
from data_paths import realdata_dir
from medlens.api import load_benchmark
from medlens.checks.check import gold_problem, run_checks, suspicious_variants
from medlens.checks.leakage import sibling_specs
from medlens.cli import app
from medlens.core.items import Item

runner = CliRunner()

REAL_SPECS = [
    ("vqa_rad", "vqa-rad:{}"),
    ("slake", "slake:{}"),
    ("pathvqa", "pathvqa:{}"),
    ("pubmedqa", "pubmedqa:{}"),
    ("medqa", "medqa:{}/phrases_no_exclude_test.jsonl"),
    ("medmcqa", "medmcqa:{}/dev.json"),
    ("mmlu_medical", "mmlu:{}"),
]


def check_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["check", *args, "--json"])
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def statuses(report: dict[str, Any]) -> dict[str, str]:
    return {check["name"]: check["status"] for check in report["checks"]}


def named(report: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(c for c in report["checks"] if c["name"] == name)
    return found


@pytest.mark.parametrize(("folder", "template"), REAL_SPECS, ids=[f for f, _ in REAL_SPECS])
def test_check_passes_on_real_data(folder: str, template: str) -> None:
    code, report = check_json(template.format(realdata_dir(folder)))
    assert code == 0 and report["ok"] is True and report["failed"] == []
    assert statuses(report)["duplicate_ids"] == "pass"
    # the text checklist stays readable: long values (SLAKE's organ-box JSON) are cut short
    assert all(len(line) < 400 for line in named(report, "axis_counts")["details"])


def test_check_reports_vqarad_image_leakage_as_a_warning() -> None:
    _, report = check_json(f"vqa-rad:{realdata_dir('vqa_rad')}")
    leakage = named(report, "leakage[train]")
    assert leakage["status"] == "warn" and leakage["data"]["shared"] == 203
    strict = runner.invoke(app, ["check", f"vqa-rad:{realdata_dir('vqa_rad')}", "--strict"])
    assert strict.exit_code == 1 and "FAILED: leakage[train]" in strict.stdout


def test_duplicate_ids_in_a_copy_of_vqarad_fail(tmp_path: Path) -> None:
    source = realdata_dir("vqa_rad")
    (tmp_path / "data_RAD").mkdir()
    (tmp_path / "VQA_RAD Image Folder").symlink_to(source / "VQA_RAD Image Folder")
    records = json.loads((source / "data_RAD" / "testset.json").read_text())
    (tmp_path / "data_RAD" / "testset.json").write_text(json.dumps([*records, records[3]]))
    result = runner.invoke(app, ["check", f"vqa-rad:{tmp_path}"])
    assert result.exit_code == 1
    assert "FAILED: duplicate_ids" in result.stdout and "1 duplicate item ids" in result.stdout


def test_undecodable_image_in_a_copy_of_slake_fails(tmp_path: Path) -> None:
    source = realdata_dir("slake")
    shutil.copy(source / "test.json", tmp_path / "test.json")
    records = json.loads((source / "test.json").read_text())
    folders = {r["img_name"].split("/")[0] for r in records if r["q_lang"] == "en"}
    for folder in folders:
        (tmp_path / "imgs" / folder).mkdir(parents=True)
        # copies, not symlinks: an image must resolve inside its dataset's folder
        shutil.copy(source / "imgs" / folder / "source.jpg", tmp_path / "imgs" / folder)
    broken = tmp_path / "imgs" / sorted(folders)[0] / "source.jpg"
    broken.unlink()
    broken.write_bytes(b"\xff\xd8\xff\xe0 this is not a JPEG")
    code, report = check_json(
        f"slake:{tmp_path}", "--sample", "0", "--against", f"slake:{tmp_path}"
    )
    assert code == 1 and report["failed"] == ["images_decode"]


def broken_jsonl(tmp_path: Path, edit: str) -> Path:
    path = write_jsonl_benchmark(tmp_path, n_items=60)
    items = [Item.from_json(json.loads(line)) for line in path.read_text().splitlines()]
    data = [item.to_json() for item in items]
    if edit == "gold":
        data[5]["answer"] = "Z"
    elif edit == "department":
        data[7]["meta"]["department"] = data[7]["meta"]["department"].lower() + " "
        data[8]["meta"]["department"] = data[7]["meta"]["department"].strip().upper()
    path.write_text("\n".join(json.dumps(d) for d in data) + "\n")
    return path


def test_gold_not_in_options_fails_naming_the_item(tmp_path: Path) -> None:
    code, report = check_json(f"jsonl:{broken_jsonl(tmp_path, 'gold')}")
    assert code == 1 and report["failed"] == ["gold_in_options"]
    gold = named(report, "gold_in_options")
    assert gold["details"] == ["q5: gold 'Z' is not among the options"]


def test_case_variant_department_names_fail(tmp_path: Path) -> None:
    code, report = check_json(f"jsonl:{broken_jsonl(tmp_path, 'department')}")
    assert code == 1 and report["failed"] == ["axis_variants"]
    variants = named(report, "axis_variants")
    assert list(variants["data"]["variants"]) == ["department"]


def test_clean_jsonl_passes_and_reports_granularity(tmp_path: Path) -> None:
    code, report = check_json(f"jsonl:{broken_jsonl(tmp_path, 'none')}")
    assert code == 0
    assert statuses(report)["granularity"] == "info"
    kinds = named(report, "question_types")
    assert set(kinds["data"]["kinds"]) == {"choice", "multi_choice"}


def test_answers_on_a_test_split_and_missing_on_val_fail() -> None:
    train = load_benchmark(f"slake:{realdata_dir('slake')}?split=train")
    report = run_checks(train)
    assert report.failed() == ["answers"] and report.n_items == 4919
    [answers] = [check for check in report.checks if check.name == "answers"]
    assert answers.details == ("item 1622",)  # the failing item is named, not only counted


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        (Item("1", "q", "choice", {"A": "a"}, "A"), None),
        (Item("1", "q", "multi_choice", {"A": "a", "B": "b"}, "AC"), "gold letters 'C'"),
        (Item("1", "q", "yes_no", answer="maybe"), "not one of yes/no"),
        (Item("1", "q", "yes_no", answer="maybe", meta={"answer_set": "yes/no/maybe"}), None),
        (Item("1", "q", "classify", answer="het", meta={"labels": "ref|het|hom-alt"}), None),
        (Item("1", "q", "classify", answer="HET", meta={"labels": "ref|het|hom-alt"}), "label set"),
        (Item("1", "q", "detect", answer=((1.0, 2.0, 3.0, 4.0),)), None),
        (Item("1", "q", "detect", answer=((3.0, 2.0, 1.0, 4.0),)), "not [x1, y1, x2, y2]"),
        (Item("1", "q", "open", answer=" "), "empty gold text"),
    ],
)
def test_gold_problem_per_kind(item: Item, problem: str | None) -> None:
    found = gold_problem(item)
    assert found == problem if problem is None else problem in (found or "")


def test_suspicious_variants_ignore_distinct_values() -> None:
    assert suspicious_variants(
        ["Radiology", "radiology ", "Pathology", "Brain_Tissue", "Brain"]
    ) == [["Radiology", "radiology "]]
    assert suspicious_variants(["POS, PRES", "PRES, POS", "Brain Tissue"]) == []


def test_sibling_specs_are_the_other_splits() -> None:
    slake = load_benchmark(f"slake:{realdata_dir('slake')}?lang=en")
    assert [s.option("split") for s in sibling_specs(slake)] == ["train", "validate"]
    assert all(s.option("lang") == "en" for s in sibling_specs(slake))


def write_big_tsv(path: Path, target_bytes: int) -> int:
    """A GMAI-layout TSV of noise PNGs (incompressible) cycling over three images."""
    import base64
    import io
    import random

    from PIL import Image

    rng = random.Random(0)
    cells = []
    for _ in range(3):
        image = Image.frombytes("RGB", (256, 256), rng.randbytes(256 * 256 * 3))
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", compress_level=0)
        cells.append(base64.b64encode(buffer.getvalue()).decode())
    written = rows = 0
    with open(path, "w") as handle:
        handle.write("index\tquestion\tA\tB\tC\tD\tanswer\timage\tdepartment\n")
        while written < target_bytes:
            line = (
                f"{rows}\tWhich organ is shown ({rows})?\tLiver\tLung\tBrain\tHeart\t"
                f"{'ABCD'[rows % 4]}\t{cells[rows % 3]}\t{['Radiology', 'Pathology'][rows % 2]}\n"
            )
            handle.write(line)
            written += len(line)
            rows += 1
    return rows


@pytest.mark.slow
def test_check_streams_a_large_tsv_in_bounded_memory(tmp_path: Path) -> None:
    path = tmp_path / "big.tsv"
    rows = write_big_tsv(path, 300_000_000)
    script = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(done.stdout)\n"
    )
    command = [
        sys.executable,
        "-c",
        script,
        sys.executable,
        "-m",
        "medlens",
        "check",
        f"gmai:{path}",
        "--against",
        f"gmai:{path}",
        "--sample",
        "200",
        "--json",
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    code, peak_kb = (int(v) for v in out.splitlines()[0].split())
    report = json.loads(out.splitlines()[1])
    assert code == 0 and report["n_items"] == rows
    assert peak_kb < 150 * 1024, f"peak RSS {peak_kb} KB"


def test_gmai_val_and_test_tsvs_pass_with_granularity_coverage(tmp_path: Path) -> None:
    from gmai_fixture import write_gmai_tsv

    realdata_dir("vqa_rad")
    rows = write_gmai_tsv(tmp_path / "val.tsv", n_rows=16)
    write_gmai_tsv(tmp_path / "test.tsv", n_rows=8, with_answers=False)
    code, report = check_json(
        f"gmai:{tmp_path / 'val.tsv'}", "--against", f"gmai:{tmp_path / 'test.tsv'}"
    )
    assert code == 0
    expected = Counter(row.granularity for row in rows)
    assert named(report, "granularity")["data"]["counts"] == expected and len(expected) == 4
    assert named(report, "leakage[test]")["status"] == "warn"  # the same source images
    code, report = check_json(f"gmai:{tmp_path / 'test.tsv'}")
    assert code == 0 and named(report, "answers")["summary"] == "no answers (TEST split)"
    gold = named(report, "gold_in_options")
    assert gold["status"] == "info" and gold["summary"] == "no gold answers to check (TEST split)"


def broken_gmai_tsv(
    tmp_path: Path, duplicate: Sequence[int], bad_gold: Sequence[int]
) -> tuple[Path, list[str]]:
    """A GMAI TSV whose rows `duplicate` repeat row 0's index and rows `bad_gold` answer "Z";
    the path and the index of every row."""
    from gmai_fixture import write_gmai_tsv

    realdata_dir("vqa_rad")
    path = tmp_path / "broken.tsv"
    write_gmai_tsv(path, n_rows=12)  # rows 4 and 9 reuse the images of rows 3 and 8
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    names = header.split("\t")
    rows = [line.split("\t") for line in lines]
    for number in duplicate:
        rows[number][names.index("index")] = rows[0][names.index("index")]
    for number in bad_gold:
        rows[number][names.index("answer")] = "Z"
    path.write_text("\n".join([header, *("\t".join(r) for r in rows)]) + "\n", encoding="utf-8")
    return path, [row[names.index("index")] for row in rows]


def test_gmai_whole_file_problems_are_listed_by_check_and_refused_by_run(tmp_path: Path) -> None:
    path, ids = broken_gmai_tsv(tmp_path, duplicate=(2, 6), bad_gold=(5, 10))
    code, report = check_json(f"gmai:{path}")
    assert code == 1 and report["failed"] == ["duplicate_ids", "gold_in_options"]
    assert report["n_items"] == 12
    assert named(report, "duplicate_ids")["details"] == [ids[0], ids[0]]  # both repeats
    gold = named(report, "gold_in_options")
    problem = "gold 'Z' is not among the options"
    assert gold["details"] == [f"{ids[5]}: {problem}", f"{ids[10]}: {problem}"]
    text = runner.invoke(app, ["check", f"gmai:{path}", "--against", f"gmai:{path}"])
    assert text.exit_code == 1 and "FAILED: duplicate_ids, gold_in_options" in text.stdout
    # `medlens run` still refuses the file, naming the first bad row (exit 2, one line).
    for duplicate, bad_gold, where in [((2,), (), "row 3, field 'index'"),
                                       ((), (5,), "row 6, field 'answer'")]:  # fmt: skip
        path, _ = broken_gmai_tsv(tmp_path, duplicate, bad_gold)
        result = invoke_run(f"gmai:{path}", "random", tmp_path / "runs", "broken")
        assert result.exit_code == 2 and where in result.output
        assert len(result.output.strip().splitlines()) == 1
