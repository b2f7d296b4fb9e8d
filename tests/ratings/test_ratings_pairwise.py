"""`medlens ratings pairwise`: blinded side-by-side sheets, the key kept in run A, preference shares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from ratings_helpers import fill_xlsx, invoke, medlens, sheet_rows, tree


def _pairwise(run_a: Path, run_b: Path, sheet: Path, seed: int = 4) -> dict:
    result = medlens("ratings", "pairwise", run_a, run_b, "--sample", "12", "--seed", seed,
                     "--output", sheet)  # fmt: skip
    assert result.returncode == 0, result.stderr
    study = sheet_rows(sheet)[0]["study"]
    return json.loads((run_a / "ratings" / "studies" / f"{study}.json").read_text())


def test_sheet_is_blinded_and_the_key_lives_in_run_a(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from openpyxl import load_workbook

    rand, oracle = runs
    study = _pairwise(rand, oracle, tmp_path / "p.xlsx")
    rows = sheet_rows(tmp_path / "p.xlsx")
    assert len(rows) == 12
    assert list(rows[0])[5:8] == ["response_1", "response_2", "preference"]
    key = study["extra"]["key"]
    assert set(key.values()) == {"AB", "BA"}  # both orders occur with 12 items
    outputs = {}
    for name, run in (("A", rand), ("B", oracle)):
        lines = (run / "records.jsonl").read_text().splitlines()
        outputs[name] = {json.loads(x)["id"]: json.loads(x)["output"] for x in lines}
    for row in rows:
        first, second = key[row["id"]]
        assert row["response_1"] == outputs[first][row["id"]]
        assert row["response_2"] == outputs[second][row["id"]]
    workbook = load_workbook(tmp_path / "p.xlsx")
    cells = [str(c) for ws in workbook for row in ws.iter_rows(values_only=True) for c in row]
    assert not any(x in cells for x in ("AB", "BA", str(rand), str(oracle)))
    assert not (oracle / "ratings").exists()
    assert _pairwise(rand, oracle, tmp_path / "q.xlsx", seed=5)["extra"]["key"] != key


def test_import_reports_preference_shares_equal_or_better_per_rater(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rand, oracle = runs
    study = _pairwise(rand, oracle, tmp_path / "p.xlsx")
    key = study["extra"]["key"]
    ids = study["items"]
    # rater x prefers the oracle's (B's) response on 8 items, equal on 2, A on 2
    wanted = ["B"] * 8 + ["equal"] * 2 + ["A"] * 2
    fill = {}
    for item, pref in zip(ids, wanted, strict=True):
        label = "equal" if pref == "equal" else ("1 better" if key[item][0] == pref else "2 better")
        fill[item] = {"preference": label, "rater": "x"}
    fill_xlsx(tmp_path / "p.xlsx", tmp_path / "x.xlsx", fill)
    # rater y agrees except on the first two items, and writes "1"/"2"
    fill_y = {i: {"preference": {"1 better": "1", "2 better": "2"}.get(f["preference"], "equal"),
                  "rater": "y"} for i, f in fill.items()}  # fmt: skip
    fill_y[ids[0]]["preference"] = "equal"
    fill_y[ids[1]]["preference"] = "equal"
    fill_xlsx(tmp_path / "p.xlsx", tmp_path / "y.xlsx", fill_y)
    result = medlens("ratings", "import", rand, tmp_path / "x.xlsx", "--json")
    assert result.returncode == 0, result.stderr
    result = invoke("ratings", "import", rand, tmp_path / "y.xlsx", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    x = summary["by_rater"]["x"]
    assert x["n"] == 12
    assert x["categories"]["B better"]["k"] == 8 and x["categories"]["A better"]["k"] == 2
    ci = binomtest(8, 12).proportion_ci(method="wilson")
    assert x["categories"]["B better"]["ci"] == pytest.approx([ci.low, ci.high])
    assert x["equal_or_better"]["B"]["share"] == pytest.approx(10 / 12)
    assert x["equal_or_better"]["A"]["share"] == pytest.approx(4 / 12)
    y = summary["by_rater"]["y"]
    assert y["categories"]["B better"]["k"] == 6 and y["categories"]["equal"]["k"] == 4
    overall = summary["preference"]
    assert overall["n"] == 24 and overall["categories"]["B better"]["k"] == 14
    assert overall["equal_or_better"]["B"]["k"] == 20
    assert summary["agreement"]["pairs"][0]["n"] == 12
    assert summary["agreement"]["pairs"][0]["percent_agreement"] == pytest.approx(10 / 12)
    assert "modality" in summary["by"]


def test_a_pairwise_sheet_imported_into_the_wrong_run_is_refused(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rand, oracle = runs
    study = _pairwise(rand, oracle, tmp_path / "p.xlsx")
    fill = {i: {"preference": "equal", "rater": "x"} for i in study["items"]}
    filled = fill_xlsx(tmp_path / "p.xlsx", tmp_path / "x.xlsx", fill)
    before = tree(oracle)
    result = medlens("ratings", "import", oracle, filled)
    assert result.returncode == 2
    assert "x.xlsx, row 2, column 'study'" in result.stderr and "RUN_A" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert tree(oracle) == before
    bad = fill_xlsx(tmp_path / "p.xlsx", tmp_path / "b.xlsx", {study["items"][3]: {
        "preference": "A is better", "rater": "x"}})  # fmt: skip
    result = invoke("ratings", "import", rand, bad)
    assert result.returncode == 2 and "b.xlsx, row 5, column 'preference'" in result.stderr


def test_pairwise_refuses_different_benchmarks_and_bad_sample(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    from benchfiles import write_jsonl_benchmark
    from cli_runs import named_run

    rand, _ = runs
    other = write_jsonl_benchmark(tmp_path / "other", n_items=5, seed=9)
    third = named_run(f"jsonl:{other}", "oracle", tmp_path / "runs", "third")
    result = invoke(
        "ratings", "pairwise", rand, third, "--sample", "3", "--output", tmp_path / "p.xlsx"
    )
    assert result.returncode == 2 and "different benchmarks" in result.stderr
    result = invoke(
        "ratings", "pairwise", rand, rand, "--sample", "0", "--output", tmp_path / "p.xlsx"
    )
    assert result.returncode == 2 and "--sample must be at least 1" in result.stderr
    assert not (tmp_path / "p.xlsx").exists()


def test_a_changed_run_b_is_refused_and_text_output_prints(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rand, oracle = runs
    study = _pairwise(rand, oracle, tmp_path / "p.xlsx")
    fill = {i: {"preference": "2 better", "rater": "x"} for i in study["items"]}
    filled = fill_xlsx(tmp_path / "p.xlsx", tmp_path / "x.xlsx", fill)
    result = invoke("ratings", "import", rand, filled)
    assert result.returncode == 0, result.stderr
    assert "A better" in result.stdout and "B ≥ A" in result.stdout
    run_json = oracle / "run.json"
    data = json.loads(run_json.read_text())
    data["spec_hash"] = "0" * 64
    run_json.write_text(json.dumps(data))
    result = invoke("ratings", "import", rand, filled)
    assert result.returncode == 2 and "changed since this sheet was exported" in result.stderr
