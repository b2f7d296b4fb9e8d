"""`medlens slice` and medlens.analysis.slices: filters, the cube, CIs, small-n flags, worst cells."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import binom
from typer.testing import CliRunner

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from data_paths import realdata_dir
from medlens.analysis.results import build_results
from medlens.analysis.slices import (
    Cell,
    apply_where,
    cells_at,
    cross_table,
    cube,
    load_slice_table,
    worst_cells,
)
from medlens.cli import app
from medlens.core.errors import SpecError
from medlens.core.where import Condition, parse_where
from medlens.runs.store import RunStore
from medlens.stats.bootstrap import bootstrap_ci
from slice_runs import AXES, random_rows, spec, write_run

runner = CliRunner()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = random_rows(900, seed=3)
    rows[5] = {**rows[5], "error": {"type": "timeout", "message": "slow"}}
    rows[6]["meta"] = {"dept": "Radiology", "level": "image"}  # lacks "mod"
    return write_run(tmp_path_factory.mktemp("slices") / "run", rows)


# -- --where ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("dept=Radiology", (Condition("dept", ("Radiology",)),)),
        ("dept != Radiology", (Condition("dept", ("Radiology",), negate=True),)),
        ("level in (box|mask)", (Condition("level", ("box", "mask")),)),
        ("level not in ( box | mask )", (Condition("level", ("box", "mask"), negate=True),)),
        ("dept=Radiology, level in (box|mask)",
         (Condition("dept", ("Radiology",)), Condition("level", ("box", "mask")))),
        ("mod=", (Condition("mod", ("",)),)),
        ("", ()),
    ],
)  # fmt: skip
def test_parse_where(text: str, expected: tuple[Condition, ...]) -> None:
    assert parse_where(text, AXES) == expected


def test_unknown_axis_error_lists_known_axes() -> None:
    with pytest.raises(SpecError, match=r"unknown axis 'deptt' \(known axes: dept, level, mod\)"):
        parse_where("deptt=Radiology", AXES)
    with pytest.raises(SpecError, match="cannot read"):
        parse_where("dept", AXES)


def test_where_filters_like_a_manual_mask(run: Path) -> None:
    table = load_slice_table(run)
    conditions = parse_where("dept!=Radiology, level in (box|mask)", table.axes)
    filtered = apply_where(table, conditions)
    rows = [json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()]
    expected = sum(
        1
        for r in rows
        if r["meta"]["dept"] != "Radiology" and r["meta"]["level"] in ("box", "mask")
    )
    assert filtered.table.num_rows == expected > 0


# -- the cube -----------------------------------------------------------------------------------
def test_cube_levels_match_results_json(run: Path) -> None:
    """Every one-axis cell equals the report's per-axis cell (same n, score, baseline, rates)."""
    cells = cube(load_slice_table(run), ["dept", "level", "mod"])
    results = build_results(RunStore.open(run))
    overall = cells[0]
    assert overall.key == () and overall.n == results["overall"]["n"] == 899
    assert overall.score == pytest.approx(results["overall"]["score"])
    assert overall.error == pytest.approx(results["overall"]["error"])
    for axis in ("dept", "level", "mod"):
        for cell in cells_at(cells, [axis]):
            reference = results["by"][axis][dict(cell.key)[axis]]
            assert cell.n == reference["n"]
            assert cell.score == pytest.approx(reference["score"])
            assert cell.random == pytest.approx(reference["random"])
            assert cell.unparsed == pytest.approx(reference["unparsed"])
            assert cell.ci == tuple(reference["ci"])
    # 2^3 groupings; the item without "mod" is in no mod cell.
    assert {len(c.key) for c in cells} == {0, 1, 2, 3}
    assert sum(c.n for c in cells_at(cells, ["mod"])) == 898


def test_cells_match_a_manual_group_by(run: Path) -> None:
    cells = cube(load_slice_table(run), ["dept", "level"])
    items = [json.loads(line) for line in (run / "items.jsonl").read_text().splitlines()]
    records = {
        json.loads(line)["id"]: json.loads(line)
        for line in (run / "records.jsonl").read_text().splitlines()
    }
    for cell in cells_at(cells, ["dept", "level"]):
        key = dict(cell.key)
        scores = [records[i["id"]]["score"] for i in items
                  if i["meta"]["dept"] == key["dept"] and i["meta"]["level"] == key["level"]
                  and records[i["id"]]["score"] is not None]  # fmt: skip
        assert cell.n == len(scores)
        assert cell.score == pytest.approx(float(np.mean(scores)))


def test_binary_ci_is_the_wilson_cc_interval(run: Path) -> None:
    from scipy.stats import binomtest

    cells = cube(load_slice_table(run), ["dept"])
    for cell in cells:
        assert cell.score is not None and cell.ci is not None
        k = round(cell.score * cell.n)
        reference = binomtest(k, cell.n).proportion_ci(method="wilsoncc")
        assert cell.ci[0] == pytest.approx(reference.low)
        assert cell.ci[1] == pytest.approx(reference.high)
        assert cell.images == cell.n


def test_clustered_ci_resamples_images(tmp_path: Path) -> None:
    rows = random_rows(600, seed=5, image_every=4)
    cells = cube(load_slice_table(write_run(tmp_path / "run", rows)), ["dept"])
    for cell in cells:
        key = dict(cell.key)
        chosen = [
            (r["score"], r["meta"]["image_id"])
            for r in rows
            if not key or r["meta"]["dept"] == key["dept"]
        ]
        values = np.array([s for s, _ in chosen])
        lo, hi = bootstrap_ci(values, np.array([c for _, c in chosen]), n_resamples=4000, seed=2)
        assert cell.ci is not None
        assert abs(lo - cell.ci[0]) < 0.025 and abs(hi - cell.ci[1]) < 0.025


def test_small_cells_are_flagged_and_never_worst(tmp_path: Path) -> None:
    rows = [{"meta": {"dept": "Big", "level": "image"}, "score": float(i % 2)} for i in range(80)]
    rows += [{"meta": {"dept": "Tiny", "level": "image"}, "score": 0.0} for _ in range(5)]
    rows += [
        {"meta": {"dept": "Mid", "level": "box"}, "score": float(i % 4 == 0)} for i in range(60)
    ]
    cells = cube(load_slice_table(write_run(tmp_path / "run", rows)), ["dept", "level"], min_n=50)
    tiny = next(c for c in cells if c.key == (("dept", "Tiny"),))
    assert tiny.small and tiny.score == 0.0
    worst = worst_cells(cells, 10, min_n=50)
    labels = [c.label for c in worst]
    assert all(c.n >= 50 for c in worst) and "dept=Tiny" not in labels
    assert [c.score for c in worst] == sorted(c.score for c in worst if c.score is not None)
    # "Mid, box" holds exactly the items of "Mid" (and of "box"): listed once, not three times.
    assert labels[0] == "dept=Mid" and "dept=Mid, level=box" not in labels
    assert worst_cells(cells, 1, min_n=50) == worst[:1]


def test_cross_table_and_axis_limits(run: Path) -> None:
    table = load_slice_table(run)
    cells = cube(table, ["dept", "level"])
    rows, columns, grid = cross_table(cells, "dept", "level")
    assert rows == ["Dermatology", "Pathology", "Radiology"] and columns == ["box", "image", "mask"]
    assert all(isinstance(grid[(r, c)], Cell) for r in rows for c in columns)
    with pytest.raises(SpecError, match="at most 4 axes"):
        cube(table, ["dept", "level", "mod", "dept", "level"])
    with pytest.raises(SpecError, match="unknown axis 'x'"):
        cube(table, ["x"])


def test_axis_values_that_look_like_sql_are_plain_values(tmp_path: Path) -> None:
    rows = [{"meta": {"dept": "x' OR '1'='1", 'le"vel': "a"}, "score": 1.0} for _ in range(3)]
    table = load_slice_table(write_run(tmp_path / "run", rows))
    cells = cube(table, ["dept", 'le"vel'])
    assert cells_at(cells, ["dept", 'le"vel'])[0].key == (("dept", "x' OR '1'='1"), ('le"vel', "a"))
    filtered = apply_where(table, parse_where("dept=x' OR '1'='1", table.axes))
    assert filtered.table.num_rows == 3


# -- the command --------------------------------------------------------------------------------
def test_cli_json_has_every_cell_and_the_worst(run: Path) -> None:
    result = runner.invoke(
        app, ["slice", str(run), "--by", "dept,level", "--worst", "3", "--json", "--min-n", "60"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["cells"]) == 1 + 3 + 3 + 9 and len(data["worst"]) == 3
    assert all(c["n"] >= 60 for c in data["worst"])
    assert {"n", "score", "ci", "random", "unparsed", "small"} <= set(data["cells"][0])


def test_cli_text_shows_cross_table_and_marks_small_cells(run: Path) -> None:
    result = runner.invoke(
        app, ["slice", str(run), "--by", "dept,level", "--where", "mod=CT", "--min-n", "60"]
    )
    assert result.exit_code == 0, result.output
    assert "dept × level" in result.output and "where mod=CT" in result.output
    assert "* n < 60" in result.output


def test_cli_unknown_axis_is_one_line_exit_2(run: Path) -> None:
    result = runner.invoke(app, ["slice", str(run), "--by", "dept", "--where", "nope=1"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "known axes: dept, level, mod" in lines[0]


def test_cli_test_split_says_scores_need_the_answer_key(tmp_path: Path) -> None:
    rows = [{"meta": {"dept": "A", "level": "image"}, "score": None} for _ in range(4)]
    run_dir = write_run(tmp_path / "run", rows, spec(has_answers=False))
    result = runner.invoke(app, ["slice", str(run_dir), "--by", "dept"])
    assert result.exit_code == 0, result.output
    assert "official answer key" in result.output and "gmai-submission" in result.output


def test_cli_on_a_real_run(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "bench", n_items=300, n_images=30, seed=4)
    run_dir = named_run(f"jsonl:{bench}", "random", tmp_path, "r")
    result = runner.invoke(
        app, ["slice", str(run_dir), "--by", "department,granularity,modality", "--json"]
    )
    data = json.loads(result.output)
    assert data["cells"][0]["n"] == 300


# -- more cells ---------------------------------------------------------------------------------
def test_four_axes_give_sixteen_groupings_and_rates_per_cell(tmp_path: Path) -> None:
    statuses = ["ok", "refused", "empty", "unparsed"]
    rows = [
        {"meta": {"dept": f"d{i % 2}", "level": f"l{i % 3}", "mod": f"m{i % 5}", "x": f"x{i % 7}"},
         "score": float(i % 4 == 0), "status": statuses[i % 4]}
        for i in range(420)
    ]  # fmt: skip
    cells = cube(load_slice_table(write_run(tmp_path / "run", rows)), ["dept", "level", "mod", "x"])
    groupings = {tuple(a for a, _ in c.key) for c in cells}
    assert len(groupings) == 16
    assert len(cells_at(cells, ["dept", "level", "mod", "x"])) == 210  # lcm(2, 3, 5, 7)
    overall = cells[0]
    assert (overall.refused, overall.empty, overall.unparsed) == (0.25, 0.25, 0.25)
    assert overall.vlmeval_score == overall.score == 0.25
    assert overall.to_json()["key"] == {} and overall.records == 420
    assert Cell.to_json(cells[1])["key"] == dict(cells[1].key)


def test_fractional_scores_use_resampling(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    values = rng.choice([0.0, 0.25, 0.5, 1.0], 300)
    rows = [
        {"meta": {"dept": "A" if i % 3 else "B"}, "score": float(v)} for i, v in enumerate(values)
    ]
    cells = cube(load_slice_table(write_run(tmp_path / "run", rows)), ["dept"])
    lo, hi = bootstrap_ci(values, n_resamples=4000, seed=3)
    assert cells[0].ci is not None
    assert abs(cells[0].ci[0] - lo) < 0.02 and abs(cells[0].ci[1] - hi) < 0.02
    assert cells[0].score == pytest.approx(float(values.mean()))


@pytest.mark.parametrize("q", [0.025, 0.5, 0.975])
def test_binomial_quantile_equals_scipy_binom_ppf(q: float) -> None:
    from medlens.stats.bootstrap import binomial_quantile

    n = np.repeat(np.arange(1, 80), 80)
    k = np.tile(np.arange(80), 79)
    keep = k <= n
    n, k = n[keep], k[keep]
    assert (binomial_quantile(q, n, k / n) == binom.ppf(q, n, k / n)).all()


def test_cli_explains_empty_results(tmp_path: Path, run: Path) -> None:
    nothing = runner.invoke(app, ["slice", str(run), "--by", "dept", "--where", "dept=Nope"])
    # a --where that matches nothing is a mistake: exit 2, listing the axis's known values
    assert nothing.exit_code == 2
    assert "--where matches no item (known values: dept: " in nothing.output
    rows = [{"meta": {"dept": "A"}, "error": {"type": "timeout", "message": "t"}} for _ in range(3)]
    errored = runner.invoke(app, ["slice", str(write_run(tmp_path / "e", rows)), "--by", "dept"])
    assert "every matching item errored" in errored.output
    too_many = runner.invoke(app, ["slice", str(run), "--by", "dept,level,mod,dept,level"])
    assert too_many.exit_code == 2 and "at most 4 axes" in too_many.output


# -- one CI per cell, whichever command shows it -------------------------------------------------
def assert_slice_cis_equal_results(run_dir: Path, results: dict[str, Any]) -> int:
    """Every cell of `slice --by AXIS --json`, for each axis of results.json, has its exact CI."""
    checked = 0
    for axis, values in results["by"].items():
        result = runner.invoke(app, ["slice", str(run_dir), "--by", axis, "--json"])
        assert result.exit_code == 0, result.output
        for cell in json.loads(result.output)["cells"]:
            expected = values[cell["key"][axis]] if cell["key"] else results["overall"]
            assert cell["n"] == expected["n"]
            assert cell["ci"] == expected["ci"], f"{axis}={cell['key'].get(axis, '(overall)')}"
            checked += 1
    return checked


def results_json(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "results.json").read_text(encoding="utf-8"))


def test_slice_and_report_show_one_ci_for_the_demo(tmp_path: Path) -> None:
    run_dir = named_run("demo", "random", tmp_path, "demo")
    assert assert_slice_cis_equal_results(run_dir, results_json(run_dir)) > 20


def test_slice_and_report_show_one_ci_with_shared_images(tmp_path: Path) -> None:
    bench = write_jsonl_benchmark(tmp_path / "bench", n_items=400, n_images=25, seed=8)
    run_dir = named_run(f"jsonl:{bench}", "random", tmp_path, "shared")
    results = results_json(run_dir)
    assert assert_slice_cis_equal_results(run_dir, results) > 10
    # Clusters mattered: some interval is wider than the item-level (binomial) one.
    overall = results["overall"]
    n, k = overall["n"], round(overall["score"] * overall["n"])
    assert (
        overall["ci"][1] - overall["ci"][0]
        > (binom.ppf(0.975, n, k / n) - binom.ppf(0.025, n, k / n)) / n
    )


def test_slice_and_report_show_one_ci_on_vqa_rad(tmp_path: Path) -> None:
    folder = realdata_dir("vqa_rad")
    run_dir = named_run(f"vqa-rad:{folder}", "random", tmp_path, "vqarad")
    assert assert_slice_cis_equal_results(run_dir, results_json(run_dir)) > 20


def test_slice_and_report_show_one_ci_for_fractional_scores(tmp_path: Path) -> None:
    rng = random.Random(11)
    rows = [
        {"meta": {"dept": rng.choice(["A", "B", "C"]), "level": rng.choice(["x", "y"]),
                  "image_id": str(i // 3)},
         "score": rng.choice([0.0, 0.1, 0.2, 0.3, 1 / 3, 0.7, 1.0])}
        for i in range(240)
    ]  # fmt: skip
    rows += [
        {"meta": {"dept": "D", "level": "x", "image_id": "one"}, "score": score}
        for score in (0.0, 0.1, 0.3, 1.0)
    ]
    run_dir = write_run(tmp_path / "run", rows)
    results = build_results(RunStore.open(run_dir))
    assert assert_slice_cis_equal_results(run_dir, results) == (1 + 4) + (1 + 2)
    # One image asked about four times: the item-level interval keeps it from zero width.
    low, high = results["by"]["dept"]["D"]["ci"]
    assert low < 0.35 < high


def test_worst_cells_print_the_simultaneous_interval_that_matches_the_flag(tmp_path: Path) -> None:
    """Issue 35: a listed worst cell's interval is simultaneous over the rankable cells, so an
    interval wholly below chance implies the (Holm-adjusted) below-chance flag."""
    rng = np.random.default_rng(4)
    rows = [{"meta": {"dept": f"d{i % 12}", "level": "image"}, "score": float(rng.random() < 0.3)}
            for i in range(1200)]  # fmt: skip
    cells = cube(load_slice_table(write_run(tmp_path / "run", rows)), ["dept"], min_n=50)
    worst = worst_cells(cells, 5, min_n=50)
    assert worst and all(c.adjusted_over == 12 for c in worst)
    for c in worst:
        assert c.ci is not None and c.ci_unadjusted is not None
        assert c.ci[0] < c.ci_unadjusted[0] and c.ci[1] > c.ci_unadjusted[1]
        if c.random is not None and c.ci[1] < c.random:
            assert c.below_chance
    shown = worst[0].to_json()
    assert shown["ci_adjustment"] == "simultaneous over 12 cells (Bonferroni)"
    assert shown["ci_unadjusted"] == list(worst[0].ci_unadjusted)
