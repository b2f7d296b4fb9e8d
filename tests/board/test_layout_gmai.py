"""`medlens board --layout gmai`: the official leaderboard shape (overall accuracy beside the
published rows of the run's split, then granularity, task and department tables), comparable
references only, and pair tests that never pool two axes' cells."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import stats

from board_runs import board_json, invoke_board, one_error_line
from cli_runs import named_run
from medlens.analysis.reference_tables import load_reference

GRANULARITY = ("Image Level", "Box Level", "Mask Level")
TASKS = ("Disease Diagnosis", "Organ Recognition")
DEPARTMENTS = ("Pulmonary Medicine", "Neurosurgery")


def write_tsv(folder: Path, n: int) -> Path:
    """A GMAI-MMBench-format VAL TSV with the three official breakdown columns (gold A)."""
    buffer = io.BytesIO()
    Image.new("L", (4, 4), 128).save(buffer, format="PNG")
    image = base64.b64encode(buffer.getvalue()).decode()
    lines = [
        "index\timage\tquestion\tA\tB\tC\tD\tanswer\tclinical VQA task\tdepartment\tperceptual granularity"
    ]
    for i in range(n):
        lines.append(f"{i}\t{image}\tWhich finding {i}?\teffusion\tnodule\tfracture\tnormal\tA\t"
                     f"{TASKS[i % 2]}\t{DEPARTMENTS[(i // 2) % 2]}\t{GRANULARITY[i % 3]}")  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "GMAI-MMBench_VAL.tsv"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_predictions(folder: Path, name: str, right: list[bool]) -> Path:
    path = folder / f"{name}.csv"
    path.write_text(
        "index,prediction\n" + "".join(f"{i},{'A' if r else 'B'}\n" for i, r in enumerate(right))
    )
    return path


N = 60
SKILL = {"good": [i % 10 < 7 for i in range(N)], "fair": [i % 10 < 5 for i in range(N)],
         "weak": [i % 10 < 3 for i in range(N)]}  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("gmai-layout")
    bench = write_tsv(folder / "data", N)
    out = {}
    for name, right in SKILL.items():
        replay = write_predictions(folder / "data", name, right)
        out[name] = named_run(f"gmai:{bench}", f"replay:{replay}", folder / "runs", name)
    test_bench = f"gmai:{bench}?split=test"
    out["good_test"] = named_run(test_bench, f"replay:{write_predictions(folder / 'data', 'g', SKILL['good'])}",
                                 folder / "runs", "good_test")  # fmt: skip
    return out


def test_overall_beside_the_published_rows_of_the_split(runs: dict[str, Path]) -> None:
    board = board_json(
        runs["good"], runs["fair"], runs["weak"], "--layout", "gmai", "--allow-partial"
    )
    layout = board["layout"]
    assert layout["columns"] == ["overall"] and "(VAL)" in layout["title"]
    rows = {r["run"]: r["cells"]["overall"] for r in layout["rows"] if "run" in r}
    for name, right in SKILL.items():
        k = sum(right)
        assert rows[name]["value"] == pytest.approx(k / N) and rows[name]["n"] == N
        assert rows[name]["ci"] == pytest.approx(
            stats.binomtest(k, N).proportion_ci(method="wilsoncc")
        )
    published = [r for r in layout["rows"] if r["published"]]
    assert len(published) == 30 and published[1] == {
        "model": "GPT-4o", "published": True, "cells": {"overall": {"value": pytest.approx(0.5353)}},
        "source": "uni-medical/GMAI-MMBench README.md, Leaderboard (commit df685478, 2024-10-15)"}  # fmt: skip
    assert set(layout["by"]) == {"granularity", "task", "department"}
    by_level = {v: [c["score"] for c in cells] for v, cells in layout["by"]["granularity"].items()}
    order = [m["run"] for m in board["models"]]
    good = order.index("good")
    image_items = [i for i in range(N) if i % 3 == 0]
    assert by_level["image"][good] == pytest.approx(
        np.mean([SKILL["good"][i] for i in image_items])
    )
    assert board["references"] == []  # the layout holds them
    # the fixture file is shaped like GMAI-MMBench VAL but is not the official file: labelled
    assert all(
        label.startswith("not comparable: not the official file")
        for label in board["not_comparable"].values()
    )
    refused = one_error_line(invoke_board(runs["good"], "--layout", "gmai"))
    assert (
        "not the official file (GMAI-MMBench_VAL.tsv: MD5 differs); the published rows are on GMAI-MMBench_VAL"
        in refused
    )
    test = board_json(runs["good_test"], "--layout", "gmai", "--allow-partial")["layout"]
    assert "(TEST)" in test["title"]
    assert [r["cells"]["overall"]["value"] for r in test["rows"] if r["published"]][
        1
    ] == pytest.approx(0.5396)


def test_a_val_run_against_test_rows_and_a_board_where_are_refused(runs: dict[str, Path]) -> None:
    line = one_error_line(invoke_board(runs["good"], "--reference", "gmai-test"))
    assert "split val, the published rows are on test" in line and str(runs["good"]) in line
    line = one_error_line(
        invoke_board(runs["good"], "--reference", "gmai-val", "--where", "granularity=box")
    )
    assert "selection board --where granularity=box, published on the whole split" in line
    board = board_json(runs["good"], "--reference", "gmai-test", "--allow-partial")
    label = "not comparable: split val, the published rows are on test; not the official file"
    assert board["not_comparable"]["good"].startswith(label) and board["models"][0][
        "not_comparable"
    ].startswith(label)
    assert board["not_comparable"]["good"].endswith(
        "the published rows are on 11 official files (GMAI_mm_bench_TEST_part_*)"
    )
    assert len(board["references"]) == 30 and board["references"][0]["split"] == "test"
    text = " ".join(
        invoke_board(runs["good"], "--reference", "gmai-test", "--allow-partial").stdout.split()
    )
    assert label in text
    layout = board_json(
        runs["good"], "--layout", "gmai", "--allow-partial", "--where", "granularity=box"
    )["layout"]
    assert next(r for r in layout["rows"] if "run" in r)["not_comparable"].startswith(
        "not comparable: selection"
    )
    assert len(load_reference("gmai-val").rows) == 30


def test_pair_tests_never_pool_the_cells_of_two_axes(runs: dict[str, Path]) -> None:
    board = board_json(runs["good"], runs["fair"], runs["weak"], "--by", "granularity,task",
                       "--pairs", "weak:fair,fair:good")  # fmt: skip
    tests = board["pair_tests_by"]
    assert list(tests) == ["granularity", "task"]
    assert (
        tests["granularity"]["n"] == 2 * 3 and tests["task"]["n"] == 2 * 2
    )  # pairs × that axis's cells
    assert board["pair_tests"] == tests["granularity"]
    differences = [c["difference"] for p in board["pairs"] for c in p["by"]["task"].values()]
    nonzero = [d for d in differences if d != 0]
    assert tests["task"]["sign_p"] == pytest.approx(
        stats.binomtest(sum(d > 0 for d in nonzero), len(nonzero), 0.5).pvalue)  # fmt: skip


def test_layout_with_by_prints_each_axis_once_and_names_rows_by_run(runs: dict[str, Path]) -> None:
    args = (
        runs["good"],
        runs["fair"],
        runs["weak"],
        "--layout",
        "gmai",
        "--by",
        "task,department",
        "--allow-partial",
    )  # fmt: skip  (fixture files are not the official VAL file)
    for fmt, title in (("text", "By task"), ("md", "## By task")):
        out = invoke_board(*args, "--format", fmt).stdout
        assert out.count(title) == 1 and out.count(title.replace("task", "department")) == 1
        assert out.count(title.replace("task", "granularity")) == 1
    md = invoke_board(*args, "--format", "md").stdout
    layout = md[md.index("## GMAI-MMBench leaderboard") :]
    layout = layout[: layout.index("\n## ", 5)]
    assert "| good | run |" in layout and "replay:" not in layout
    by_task = md[md.index("## By task") :]
    by_task = by_task[: by_task.index("\n## ", 5)]
    assert "| good |" in by_task and "replay:" not in by_task and "sha256" not in by_task
