"""`medlens board --layout medcmr` over replayed runs of known correctness and a loopback rubric
judge: every cell, the rubric-dimension table, the pair tests and the metadata correlations
equal a hand computation (and scipy); published rows equal the paper's table; bad input is
one line; the HTML page renders in headless Chromium with untrusted names as text."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from board_runs import board_json, invoke_board, one_error_line
from browser import browse
from medlens.analysis.reference_tables import find_row, load_reference
from medlens.stats.bootstrap import group_cis
from paper_fixtures import (
    DIMENSIONS,
    GOLDS,
    MCQ_PER_DIM,
    OPEN_PER_DIM,
    judge_runs,
    medcmr_runs,
    open_answer,
    rubric_points,
    rubric_score,
)

Answer = Callable[[int, int, bool], str]
EVIL = "<img src=x onerror=\"document.body.dataset.pwned='1'\">"


def model(mcq_right: int, open_modes: list[str]) -> Answer:
    """Right on MCQ item k of dimension d when (7d + k) % 10 < mcq_right; open answers cycle."""

    def answer(d: int, k: int, is_open: bool) -> str:
        if is_open:
            return open_modes[(d + k) % len(open_modes)]
        return "right" if (7 * d + k) % 10 < mcq_right else "wrong"

    return answer


MODELS: dict[str, Answer] = {
    "base": model(6, ["gold", "negated"]),
    "tuned": model(4, ["gold", "synonym", "negated"]),
    "base2": model(7, ["synonym", "negated"]),
    "tuned2": model(5, ["gold", "synonym"]),
}
PAIRS = "base:tuned,base2:tuned2"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("medcmr-layout")
    made = medcmr_runs(folder, MODELS)
    judge_runs(made, "rubric", "rubric")
    meta = folder / "meta.csv"
    meta.write_text("run,params_b,medical\nbase,7,no\ntuned,7,yes\nbase2,13,no\ntuned2,30,yes\n")
    made["meta"] = meta
    return made


def run_args(runs: dict[str, Path]) -> list[Path]:
    return [runs[name] for name in MODELS]


def mcq_values(answer: Answer, d: int) -> tuple[np.ndarray, np.ndarray]:
    right = np.array([answer(d, k, False) == "right" for k in range(MCQ_PER_DIM)], dtype=float)
    return right, np.array([f"img-m{d}-{k // 2}" for k in range(MCQ_PER_DIM)])


def open_values(answer: Answer, d: int) -> tuple[list[str], list[str]]:
    golds = [GOLDS[(d + k) % len(GOLDS)] for k in range(OPEN_PER_DIM)]
    return [open_answer(g, answer(d, k, True)) for k, g in enumerate(golds)], golds


def cell_by_hand(values: np.ndarray, clusters: np.ndarray) -> tuple[float, list[float]]:
    lo, hi = group_cis(values, np.zeros(values.size, dtype=int), clusters)
    return float(values.mean()), [float(lo[0]), float(hi[0])]


def expected_cells(answer: Answer) -> dict[str, tuple[float, list[float]]]:
    out = {}
    every, every_clusters, opened, open_clusters = [], [], [], []
    for d, dim in enumerate(DIMENSIONS):
        right, clusters = mcq_values(answer, d)
        out[dim] = cell_by_hand(right, clusters)
        every += right.tolist()
        every_clusters += clusters.tolist()
        answers, golds = open_values(answer, d)
        opened += [rubric_score(a, g) for a, g in zip(answers, golds, strict=True)]
        open_clusters += [f"img-o{d}-{k // 2}" for k in range(OPEN_PER_DIM)]
    out["mcq_all"] = cell_by_hand(np.array(every), np.array(every_clusters))
    out["open_all"] = cell_by_hand(np.array(opened), np.array(open_clusters))
    return out


@pytest.fixture(scope="module")
def board(runs: dict[str, Path]) -> dict[str, Any]:
    return board_json(*run_args(runs), "--layout", "medcmr", "--allow-partial", "--judge", "rubric", "--pairs", PAIRS,
                      "--meta", runs["meta"])  # fmt: skip


def test_every_run_cell_equals_the_hand_computation(board: dict[str, Any]) -> None:
    layout = board["layout"]
    assert layout["name"] == "medcmr" and layout["score_source"] == "combined:rubric"
    assert layout["columns"] == [*DIMENSIONS, "mcq_all", "open_all"]
    rows = {row["run"]: row for row in layout["rows"] if "run" in row}
    assert list(rows) == list(MODELS)
    for name, answer in MODELS.items():
        for column, (value, ci) in expected_cells(answer).items():
            cell = rows[name]["cells"][column]
            assert cell["value"] == pytest.approx(value), (name, column)
            assert cell["ci"] == pytest.approx(ci), (name, column)
        assert rows[name]["cells"]["mcq_all"]["n"] == 7 * MCQ_PER_DIM
        assert rows[name]["cells"]["open_all"]["coverage"] == {"verdicts": 28, "scope": 28}
        assert rows[name]["published"] is False and rows[name]["source"] == "combined:rubric"


def test_chance_and_published_rows(board: dict[str, Any]) -> None:
    rows = board["layout"]["rows"]
    chance = next(r for r in rows if r.get("chance"))
    assert {c: v["value"] for c, v in chance["cells"].items()} == pytest.approx(
        {c: 0.2 for c in [*DIMENSIONS, "mcq_all"]}
    )  # five options; open answers have no chance level
    published = [r for r in rows if r["published"]]
    table = load_reference("medcmr")
    assert [r["model"] for r in published] == [r.model for r in table.rows]
    for row in published:
        reference = find_row(table, row["model"])
        assert row["cells"] == {
            c: {"value": pytest.approx(reference.values[c])} for c in table.columns
        }
        assert row["source"] == "Med-CMR (CVPR 2026), arXiv:2512.00818, main table"
    labels = {r["run"]: r.get("not_comparable") for r in rows if "run" in r}
    assert set(labels.values()) == {"not comparable: 70 items, the published set has 20653"}


def test_rubric_dimensions_are_on_the_points_scale(board: dict[str, Any]) -> None:
    dims = board["layout"]["dimensions"]
    assert dims["columns"] == [
        "consistency",
        "coherence",
        "visual_accuracy",
        "ground_truth_correctness",
    ]
    assert dims["weights"] == {"consistency": 1.0, "coherence": 1.0, "visual_accuracy": 4.0,
                               "ground_truth_correctness": 4.0}  # fmt: skip
    for row in dims["rows"]:
        answer = MODELS[row["run"]]
        points: dict[str, list[int]] = {d: [] for d in dims["columns"]}
        clusters = []
        for d in range(7):
            answers, golds = open_values(answer, d)
            for k, (a, g) in enumerate(zip(answers, golds, strict=True)):
                for name, value in rubric_points(a, g).items():
                    points[name].append(value)
                clusters.append(f"img-o{d}-{k // 2}")
        for name, values in points.items():
            cell = row["cells"][name]
            lo, hi = group_cis(
                np.array(values) / 10, np.zeros(len(values), dtype=int), np.array(clusters)
            )
            assert cell["value"] == pytest.approx(np.mean(values)) and cell["n"] == 28
            assert cell["ci"] == pytest.approx([10 * lo[0], 10 * hi[0]])
            assert 0.0 <= cell["ci"][0] <= cell["value"] <= cell["ci"][1] <= 10.0


def test_pair_tests_are_separate_for_mcq_and_open_and_equal_scipy(board: dict[str, Any]) -> None:
    pairs = board["layout"]["pairs"]
    assert board["pairs"] == []  # no overall pair cell pooling MCQ and judged open scores
    mcq, opened = [], []
    for row, (base, tuned) in zip(
        pairs["rows"], [p.split(":") for p in PAIRS.split(",")], strict=True
    ):
        assert (row["base"], row["tuned"]) == (base, tuned)
        for d, dim in enumerate(DIMENSIONS):
            difference = (
                mcq_values(MODELS[tuned], d)[0].mean() - mcq_values(MODELS[base], d)[0].mean()
            )
            assert row["mcq"][dim] == pytest.approx(difference)
            mcq.append(difference)
            a, g = open_values(MODELS[base], d)
            b, _ = open_values(MODELS[tuned], d)
            gap = np.mean([rubric_score(x, y) for x, y in zip(b, g, strict=True)]) - np.mean(
                [rubric_score(x, y) for x, y in zip(a, g, strict=True)])  # fmt: skip
            assert row["open"][dim] == pytest.approx(gap)
            opened.append(gap)
    for form, differences in (("mcq", mcq), ("open", opened)):
        nonzero = [x for x in differences if abs(x) > 1e-12]
        test = pairs["tests"][form]
        positive = sum(x > 0 for x in nonzero)
        assert test["n_nonzero"] == len(nonzero) and test["positive"] == positive
        assert test["sign_p"] == pytest.approx(stats.binomtest(positive, len(nonzero), 0.5).pvalue)
        assert test["wilcoxon_p"] == pytest.approx(stats.wilcoxon(nonzero).pvalue, rel=1e-6)


def test_size_correlations_per_column_equal_scipy(board: dict[str, Any]) -> None:
    correlations = board["layout"]["correlations"]["params_b"]
    sizes = np.array([7, 7, 13, 30], dtype=float)
    rows = {r["run"]: r for r in board["layout"]["rows"] if "run" in r}
    for column in ("mcq_all", "open_all", "SOD"):
        y = np.array([rows[n]["cells"][column]["value"] for n in MODELS])
        expected = stats.pearsonr(sizes, y)
        assert correlations[column]["pearson"] == pytest.approx(expected.statistic)
        assert correlations[column]["spearman"] == pytest.approx(
            stats.spearmanr(sizes, y).statistic
        )
    dims = {r["run"]: r for r in board["layout"]["dimensions"]["rows"]}
    visual = np.array([dims[n]["cells"]["visual_accuracy"]["value"] for n in MODELS])
    assert correlations["visual_accuracy"]["pearson"] == pytest.approx(
        stats.pearsonr(sizes, visual).statistic
    )


def test_without_a_judge_open_all_is_the_rules_and_the_title_says_so(runs: dict[str, Path]) -> None:
    board = board_json(*run_args(runs), "--layout", "medcmr", "--allow-partial")
    layout = board["layout"]
    assert layout["score_source"] == "rules" and layout["dimensions"] is None
    assert "scored by rules (no --judge: not the paper's metric)" in layout["title"]
    row = next(r for r in layout["rows"] if r.get("run") == "base")
    assert "coverage" not in row["cells"]["open_all"]
    answers, golds = zip(*[(a, g) for d in range(7) for a, g in zip(*open_values(MODELS["base"], d), strict=True)],
                         strict=True)  # fmt: skip
    assert row["cells"]["open_all"]["value"] == pytest.approx(
        np.mean([a == g for a, g in zip(answers, golds, strict=True)])
    )


def test_every_format_prints_the_same_table(runs: dict[str, Path], tmp_path: Path) -> None:
    args = [*run_args(runs), "--layout", "medcmr", "--allow-partial", "--judge", "rubric"]
    text = invoke_board(*args).stdout
    assert "Med-CMR main table" in text and "GPT-5" in text and "not comparable: 70 items" in text
    markdown = invoke_board(*args, "-f", "md").stdout
    assert "## Med\\-CMR main table" in markdown or "## Med-CMR main table" in markdown
    assert (
        "| GPT\\-5 | published | 66.08 |" in markdown or "| GPT-5 | published | 66.08 |" in markdown
    )
    from openpyxl import load_workbook

    book = tmp_path / "b.xlsx"
    assert invoke_board(*args, "-f", "xlsx", "-o", book).exit_code == 0
    sheet = load_workbook(book)["layout"]
    cells = list(sheet.iter_rows(values_only=True))
    assert (cells[0][0], cells[0][2]) == ("run / model", "SOD")
    assert any(row[0] == "GPT-5" and row[2] == pytest.approx(0.6608) for row in cells)


def test_the_layout_page_renders_in_chromium_with_names_as_text(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    evil = tmp_path / EVIL
    shutil.copytree(runs["base"], evil)
    page = tmp_path / "board.html"
    result = invoke_board(evil, runs["tuned"], "--layout", "medcmr", "--allow-partial", "--judge", "rubric",
                          "--pairs", f"{EVIL}:tuned", "-f", "html", "-o", page)  # fmt: skip
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert "<img src=x" not in html and "&lt;img src=x onerror=" in html
    dom = browse(page, tmp_path / "profile", "--dump-dom").stdout
    body = dom.split("<body", 1)[1].split(">", 1)[0]
    assert 'data-board="1"' in body and "data-pwned" not in body
    assert '<h2 id="layout">Med-CMR main table' in dom
    cells = re.findall(r"<td[^>]*>(.*?)</td>", dom, re.S)
    assert "66.08" in cells and any(c.startswith("&lt;img src=x") for c in cells)


def test_bad_input_is_one_line(runs: dict[str, Path], tmp_path: Path) -> None:
    from cli_runs import named_run
    from provenance_fixture import write_choice_benchmark, write_replay

    bench = write_choice_benchmark(tmp_path / "data", 10)
    plain = named_run(
        f"jsonl:{bench}",
        f"replay:{write_replay(tmp_path / 'data', 10, 5)}",
        tmp_path / "runs",
        "plain",
    )
    line = one_error_line(invoke_board(plain, "--layout", "medcmr"))
    assert str(plain) in line and "--layout medcmr needs the axes dimension" in line
    assert "unknown layout" in one_error_line(invoke_board(runs["base"], "--layout", "cmr"))
    assert "--judge goes with --layout" in one_error_line(
        invoke_board(runs["base"], "--judge", "rubric")
    )
    line = one_error_line(
        invoke_board(runs["base"], "--layout", "medcmr", "--score", "judge:rubric")
    )
    assert "--score combined:rubric" in line
    line = one_error_line(invoke_board(runs["base"], "--layout", "medcmr", "--judge", "nope"))
    assert "no judge named 'nope'" in line and str(runs["base"]) in line
    mine = tmp_path / "mine.csv"
    mine.write_text("model,split,selection,SOD,overall,n_items\nMine,test,,50,40,70\n")
    line = one_error_line(invoke_board(runs["base"], "--layout", "medcmr", "--reference", mine))
    assert f"{mine}, line 1: column 'overall' is not a column of --layout medcmr" in line
    line = one_error_line(invoke_board(runs["base"], "--reference", "medcmr"))
    assert "not comparable with reference medcmr: 70 items, the published set has 20653" in line
    labelled = board_json(runs["base"], "--reference", "medcmr", "--allow-partial")
    assert labelled["not_comparable"] == {
        "base": "not comparable: 70 items, the published set has 20653"
    }
    assert labelled["references"] == [] and labelled["reference_table"]["name"] == "medcmr"
    assert json.dumps(labelled)  # the board stays JSON


def test_a_medcmr_report_keeps_mcq_accuracy_and_judged_open_scores_apart(
    runs: dict[str, Path],
) -> None:
    """Issue 30: the default report of a Med-CMR run printed one overall pooling MCQ accuracy
    with rule-scored open answers; it now gives the two numbers Med-CMR reports, apart."""
    from typer.testing import CliRunner

    from medlens.cli import app

    data = json.loads(CliRunner().invoke(app, ["report", str(runs["base"]), "-f", "json"]).stdout)
    expected = expected_cells(MODELS["base"])
    split = data["medcmr"]
    assert split["mcq"]["score"] == pytest.approx(expected["mcq_all"][0])
    assert split["open"]["score"] == pytest.approx(expected["open_all"][0])
    assert split["open_source"] == "judge rubric (rubric)"
    text = CliRunner().invoke(app, ["report", str(runs["base"])]).output
    assert (
        "Med-CMR MCQ accuracy:" in text and "Med-CMR open answers, judge rubric (rubric):" in text
    )
    assert "reports MCQ accuracy and the judged open-answer score apart" in text
