"""`medlens board` over real baseline runs of the demo benchmark: ranks, rank intervals, ties,
per-axis tables, paired families, difficulty, alignment, formats."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from board_runs import MODELS, board_json, demo_copy, demo_runs, invoke_board, one_error_line
from cli_runs import named_run
from medlens.analysis.compare import compare_runs
from medlens.board.align import align_runs, open_runs
from medlens.board.ranks import RESAMPLE_BATCH_CELLS, rank_intervals

__all__ = ["demo_runs"]  # the fixture, imported for pytest
CONTRACT_KEYS = {"benchmark", "models", "tied", "by", "pairs", "pair_tests", "correlations",
                 "references"}  # fmt: skip
MODEL_KEYS = {"run", "name", "n", "score", "ci", "rank", "rank_ci"}


def all_runs(runs: dict[str, Path]) -> list[Path]:
    return [runs[name] for name in MODELS]


def report_json(run: Path) -> dict:  # type: ignore[type-arg]
    from typer.testing import CliRunner

    from medlens.cli import app

    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def assert_cells_equal(mine: dict, wanted: dict) -> None:  # type: ignore[type-arg]
    assert mine.keys() == wanted.keys()
    for key, value in wanted.items():
        if isinstance(value, (list, tuple)):
            assert mine[key] == pytest.approx(list(value), abs=1e-12), key
        elif isinstance(value, float):
            assert mine[key] == pytest.approx(value, abs=1e-12), key
        else:
            assert mine[key] == value, key


def test_oracle_ranks_first_with_interval_1_1_and_random_seeds_are_tied(
    demo_runs: dict[str, Path],
) -> None:
    board = board_json(*all_runs(demo_runs))
    assert set(board) >= CONTRACT_KEYS
    assert all(set(m) >= MODEL_KEYS for m in board["models"])
    first = board["models"][0]
    assert (first["run"], first["name"], first["rank"], first["rank_ci"]) == (
        "oracle", "oracle", 1, [1, 1]
    )  # fmt: skip
    assert first["score"] == 1.0 and first["n"] == 189
    assert any({"random_1", "random_2"} <= set(group) for group in board["tied"])
    assert not any("oracle" in group for group in board["tied"])
    assert [m["rank"] for m in board["models"]] == sorted(m["rank"] for m in board["models"])
    for model in board["models"][1:]:
        assert model["rank_ci"][0] >= 2 and model["rank_ci"][0] <= model["rank"]
        assert model["rank"] <= model["rank_ci"][1] <= 5


def test_scores_and_cis_are_the_ones_report_prints(demo_runs: dict[str, Path]) -> None:
    board = board_json(*all_runs(demo_runs), "--by", "granularity,department")
    for model in board["models"]:
        report = report_json(demo_runs[model["run"]])
        assert model["n"] == report["overall"]["n"]
        assert model["score"] == pytest.approx(report["overall"]["score"], abs=1e-12)
        assert model["ci"] == pytest.approx(report["overall"]["ci"], abs=1e-12)
        for axis in ("granularity", "department"):
            for value, cells in board["by"][axis].items():
                cell = next(c for c in cells if c["run"] == model["run"])
                expected = report["by"][axis][value]
                assert (cell["n"], cell["score"]) == pytest.approx(
                    (expected["n"], expected["score"])
                )
                assert cell["ci"] == pytest.approx(expected["ci"], abs=1e-12)
    for cells in board["by"]["granularity"].values():
        best = max(c["score"] for c in cells)
        assert [c["best"] for c in cells] == [c["score"] == best for c in cells]
    for value, chance in board["by_chance"]["granularity"].items():
        assert chance == pytest.approx(
            report_json(demo_runs["first"])["by"]["granularity"][value]["random"]
        )
    assert board["chance"]["score"] == pytest.approx(
        report_json(demo_runs["first"])["overall"]["random"]
    )


def test_rank_interval_equals_a_loop_over_the_same_image_draws(demo_runs: dict[str, Path]) -> None:
    aligned = align_runs(open_runs(all_runs(demo_runs)))
    assert RESAMPLE_BATCH_CELLS // aligned.n_images >= 500  # one batch: the same draws below
    intervals = rank_intervals(aligned, n_resamples=500, seed=3)
    rng = np.random.default_rng(3)
    picks = rng.integers(0, aligned.n_images, size=(500, aligned.n_images))
    ranks = []
    for draw in picks:
        chosen = np.concatenate([np.flatnonzero(aligned.cluster == g) for g in draw])
        means = aligned.scores[:, chosen].mean(axis=1)
        ranks.append(stats.rankdata(-np.round(means, 12), method="min"))
    expected_lo = np.quantile(np.array(ranks), 0.025, axis=0, method="inverted_cdf")
    expected_hi = np.quantile(np.array(ranks), 0.975, axis=0, method="inverted_cdf")
    assert intervals[:, 0].tolist() == expected_lo.tolist()
    assert intervals[:, 1].tolist() == expected_hi.tolist()


def test_pairs_equal_compare_and_pair_tests_equal_scipy(demo_runs: dict[str, Path]) -> None:
    board = board_json(*all_runs(demo_runs), "--by", "granularity",
                       "--pairs", "random_1:oracle,first:prior,random_2:random_1")  # fmt: skip
    assert [(p["base"], p["tuned"]) for p in board["pairs"]] == [
        ("random_1", "oracle"), ("first", "prior"), ("random_2", "random_1")
    ]  # fmt: skip
    differences = []
    for pair in board["pairs"]:
        expected = compare_runs(demo_runs[pair["base"]], demo_runs[pair["tuned"]], ["granularity"])
        overall = expected.overall.to_json()
        del overall["key"]
        assert_cells_equal(pair["overall"], overall)
        for cell in expected.by["granularity"]:
            mine = pair["by"]["granularity"][cell.key[0][1]]
            wanted = cell.to_json()
            del wanted["key"]
            assert_cells_equal(mine, wanted)
            differences.append(cell.difference)
    tests = board["pair_tests"]
    # equal differences computed from different cells (1/24 and 2/48) are ties, not float noise
    rounded = np.round(differences, 12)
    nonzero = rounded[rounded != 0]
    assert tests["n"] == len(differences) == 12 and tests["n_nonzero"] == nonzero.size
    assert tests["sign_p"] == pytest.approx(
        stats.binomtest(int((nonzero > 0).sum()), nonzero.size, 0.5).pvalue
    )
    assert tests["wilcoxon_p"] == pytest.approx(stats.wilcoxon(nonzero).pvalue)
    assert tests["median_difference"] == pytest.approx(np.median(differences))
    assert tests["min_p"] == pytest.approx(2 * 0.5**nonzero.size)


def test_overall_pair_tests_use_one_difference_per_pair(demo_runs: dict[str, Path]) -> None:
    board = board_json(*all_runs(demo_runs), "--pairs", "random_1:oracle,first:prior")
    d = [p["overall"]["difference"] for p in board["pairs"]]
    assert board["pair_tests"]["n"] == 2 and board["pair_tests"]["over"].startswith("pairs")
    assert board["pair_tests"]["sign_p"] == pytest.approx(
        stats.binomtest(sum(x > 0 for x in d), 2, 0.5).pvalue
    )
    assert board["pair_tests"]["min_p"] == 0.5  # two pairs can never reach significance


def test_difficulty_and_the_solved_by_all_export(
    demo_runs: dict[str, Path], tmp_path: Path
) -> None:
    target = tmp_path / "solved.txt"
    result = invoke_board(demo_runs["oracle"], demo_runs["first"], "--solved-by-all", target)
    assert result.exit_code == 0, result.output
    board = board_json(demo_runs["oracle"], demo_runs["first"])
    aligned = align_runs(open_runs([demo_runs["oracle"], demo_runs["first"]]))
    first_right = aligned.ids[aligned.scores[1] == 1].tolist()
    assert target.read_text().splitlines() == first_right
    d = board["difficulty"]
    assert d["solved_by_all"] == len(first_right) and d["solved_by_none"] == 0
    assert [h["items"] for h in d["histogram"]] == [0, 189 - len(first_right), len(first_right)]
    shares = d["per_item"]
    assert len(shares) == 189 and all(shares[i] == 1.0 for i in first_right)
    assert sorted(set(shares.values())) == [0.5, 1.0]


def test_where_filters_items_before_everything(demo_runs: dict[str, Path]) -> None:
    board = board_json(*all_runs(demo_runs), "--where", "granularity=box")
    assert board["align"]["n"] == 96 and all(m["n"] == 96 for m in board["models"])
    assert board["models"][0]["run"] == "oracle"


def test_align_intersect_says_what_was_dropped(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    short = named_run("demo", "first", tmp_path, "first_50", "--limit", "50")
    line = one_error_line(invoke_board(demo_runs["oracle"], short))
    assert "--align intersect" in line and "50" in line
    board = board_json(demo_runs["oracle"], short, "--align", "intersect")
    assert board["align"]["n"] == 50
    assert board["align"]["dropped"] == {"oracle": 139, "first_50": 0}
    text = invoke_board(demo_runs["oracle"], short, "--align", "intersect").stdout
    assert "50 common items; dropped oracle 139" in " ".join(text.split())


def test_across_benchmarks_matrix_and_gains(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    small = demo_copy(demo_runs, tmp_path / "small", "board-test-small.jsonl", slice(None, None, 3))
    runs = [named_run(f"jsonl:{small}", model, tmp_path, f"small_{name}")
            for name, model in (("oracle", "oracle"), ("random_1", "random?seed=1"))]  # fmt: skip
    board = board_json(demo_runs["oracle"], demo_runs["random_1"], *runs, "--across",
                       "--base", "random?seed=1")  # fmt: skip
    matrix = board["across"]
    assert matrix["models"] == ["oracle", "random?seed=1"] and len(matrix["benchmarks"]) == 2
    cells = {(c["model"], c["benchmark"]): c for c in matrix["cells"]}
    small_bench = matrix["benchmarks"][1]
    gain = cells[("oracle", small_bench)]["gain"]
    expected = compare_runs(runs[1], runs[0]).overall
    assert gain["difference"] == pytest.approx(expected.difference)
    assert gain["ci"] == pytest.approx(list(expected.ci))
    assert cells[("random?seed=1", small_bench)]["gain"] is None
    assert cells[("oracle", small_bench)]["n"] == len(small.read_text().splitlines())
    text = invoke_board(demo_runs["oracle"], *runs, "--across").stdout
    assert "Models × benchmarks" in text
    boxes = board_json(demo_runs["oracle"], *runs, "--across", "--where", "granularity=box")
    assert {c["n"] for c in boxes["across"]["cells"] if c["benchmark"] == "demo"} == {96}


def test_text_markdown_and_xlsx(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    from openpyxl import load_workbook

    args = [*all_runs(demo_runs), "--by", "granularity", "--pairs", "first:prior"]
    text = invoke_board(*args)
    assert text.exit_code == 0, text.output
    assert "Models" in text.stdout and "chance (random guess)" in text.stdout
    markdown = invoke_board(*args, "--format", "md").stdout
    assert markdown.startswith("# medlens board: demo") and "| oracle |" in markdown
    assert "## By granularity" in markdown and "## Tests across pairs" in markdown
    book_path = tmp_path / "board.xlsx"
    result = invoke_board(*args, "--format", "xlsx", "--output", book_path)
    assert result.exit_code == 0, result.output
    book = load_workbook(io.BytesIO(book_path.read_bytes()))
    assert {"models", "by granularity", "pairs", "difficulty"} <= set(book.sheetnames)
    models = list(book["models"].iter_rows(values_only=True))
    assert models[0][:3] == ("model", "run", "rank")
    assert models[1][1] == "oracle" and models[1][6] == 1.0  # a number, not "100.0%"


def test_json_to_a_file_leaves_stdout_empty(demo_runs: dict[str, Path], tmp_path: Path) -> None:
    target = tmp_path / "out" / "board.json"
    result = invoke_board(demo_runs["oracle"], demo_runs["first"], "--json", "--output", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert json.loads(target.read_text())["models"][0]["run"] == "oracle"


def test_a_torn_last_record_is_read_by_the_store_rules(
    demo_runs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    torn = tmp_path / "torn"
    shutil.copytree(demo_runs["first"], torn)
    with open(torn / "records.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"id": "ct_head-modality", "score": 1.0, "err')  # killed mid-write
    board = board_json(demo_runs["oracle"], torn)
    expected = board_json(demo_runs["oracle"], demo_runs["first"])
    assert [m["score"] for m in board["models"]] == [m["score"] for m in expected["models"]]
