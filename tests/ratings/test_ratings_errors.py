"""`medlens ratings errors`: stratified samples of wrong answers, categories tallied per axis value."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from scipy.stats import binomtest

from medlens.core.items import Item
from medlens.ratings.attribution import stratified_sample
from ratings_helpers import fill_xlsx, invoke, make_runs, medlens, sheet_rows


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return make_runs(tmp_path_factory.mktemp("ratings-errors"), n_items=60)


def _items(values: list[str]) -> list[Item]:
    return [
        Item(id=f"i{n}", question="q", kind="open", meta={"task": v}) for n, v in enumerate(values)
    ]


def test_stratified_sample_allocates_proportionally_with_largest_remainders() -> None:
    items = _items(["a"] * 50 + ["b"] * 30 + ["c"] * 20)
    chosen = stratified_sample(items, "task", 10, seed=3)
    by_id = {i.id: i.meta["task"] for i in items}
    assert Counter(by_id[i] for i in chosen) == {"a": 5, "b": 3, "c": 2}
    uneven = stratified_sample(_items(["a"] * 5 + ["b"] * 4 + ["c"] * 1), "task", 4, seed=0)
    counts = Counter(("a" * 5 + "b" * 4 + "c")[int(i[1:])] for i in uneven)
    assert counts == {"a": 2, "b": 2}  # quotas 2.0, 1.6, 0.4 → the .6 remainder wins
    assert stratified_sample(items, "task", 10, seed=3) == chosen
    assert sorted(stratified_sample(items, "task", 500, seed=1)) == sorted(i.id for i in items)


def test_errors_sheet_holds_only_wrong_answers(runs: tuple[Path, Path], tmp_path: Path) -> None:
    rand, _ = runs
    sheet = tmp_path / "e.xlsx"
    result = medlens("ratings", "errors", rand, "--sample", "10", "--stratify", "modality",
                     "--output", sheet)  # fmt: skip
    assert result.returncode == 0, result.stderr
    records = {json.loads(x)["id"]: json.loads(x) for x in (rand / "records.jsonl").open()}
    rows = sheet_rows(sheet)
    assert len(rows) == 10
    assert all(records[r["id"]]["score"] < 1 for r in rows)
    assert "category" in rows[0] and "extracted" in rows[0]


def test_imported_categories_are_tallied_per_axis_value_with_cis(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rand, _ = runs
    sheet = tmp_path / "e.xlsx"
    result = invoke("ratings", "errors", rand, "--sample", "12", "--seed", "2", "--categories",
                    "recognition,reasoning,format", "--output", sheet)  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = sheet_rows(sheet)
    items = {json.loads(x)["id"]: json.loads(x) for x in (rand / "items.jsonl").open()}
    categories = ["recognition", "reasoning", "format"]
    fill = {r["id"]: {"category": categories[n % 3], "rater": "m"} for n, r in enumerate(rows)}
    result = invoke(
        "ratings", "import", rand, fill_xlsx(sheet, tmp_path / "f.xlsx", fill), "--json"
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    category = summary["axes"]["category"]
    assert category["n"] == 12 and list(category["categories"]) == categories
    assert category["categories"]["reasoning"]["k"] == 4
    for value, cell in category["by"]["modality"].items():
        mine = [i for i, f in fill.items() if items[i]["meta"]["modality"] == value]
        k = sum(fill[i]["category"] == "recognition" for i in mine)
        assert cell["n"] == len(mine) and cell["categories"]["recognition"]["k"] == k
        ci = binomtest(k, len(mine)).proportion_ci(method="wilson")
        assert cell["categories"]["recognition"]["ci"] == pytest.approx([ci.low, ci.high])
    bad = fill_xlsx(
        sheet, tmp_path / "b.xlsx", {rows[0]["id"]: {"category": "knowledge", "rater": "m"}}
    )
    result = invoke("ratings", "import", rand, bad)
    assert result.returncode == 2 and "b.xlsx, row 2, column 'category'" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sample", "0"], "--sample must be at least 1"),
        (["--sample", "3", "--stratify", "nope"], "--stratify nope: no such axis"),
        (["--sample", "3", "--categories", ","], "needs at least one category"),
        (["--sample", "3", "--categories", "a,a"], "lists a category twice"),
    ],
)
def test_bad_errors_arguments(
    runs: tuple[Path, Path], tmp_path: Path, args: list[str], message: str
) -> None:
    rand, _ = runs
    result = invoke("ratings", "errors", rand, "--output", tmp_path / "e.xlsx", *args)
    assert result.returncode == 2 and message in result.stderr
    assert not (tmp_path / "e.xlsx").exists()


def test_a_run_without_wrong_answers_says_so(runs: tuple[Path, Path], tmp_path: Path) -> None:
    _, oracle = runs
    result = invoke("ratings", "errors", oracle, "--sample", "3", "--output", tmp_path / "e.xlsx")
    assert result.returncode == 2 and "no wrong answers" in result.stderr
