"""The design's sampling unit (`items sample --unit item|image`, item by default).

Exhaustive enumeration on a tiny population whose items share images: drawing single items is
design-unbiased and its variance estimator (one item a unit, no cluster term) is exactly unbiased
for the estimator's design variance; drawing images is too, with the cluster-aware variance, and
an item-level variance would be wrong for it. Then the command end to end: the default draws
items, `--unit image` whole images, a design recorded before the unit existed reads as images,
and an unknown unit is refused."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from cli_runs import named_run
from items_fixtures import invoke, one_error_line, write_bench, write_runs
from medlens.core.items import Item
from medlens.items import aipw, design
from medlens.items.estimate import _domain
from medlens.items.sample import smallest_n, unit_keys
from medlens.runs.store import spec_hash

# 10 items on 4 images (two items without one) in two strata; answers agree within an image
IMAGES = ["i0", "i0", "i0", "i1", "i1", "i2", "i3", "i3", "", ""]
STRATUM = ["A", "A", "A", "A", "A", "B", "B", "B", "A", "B"]
SCORES = [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]
PREDICTED = [0.8, 0.6, 0.5, 0.3, 0.2, 0.7, 0.9, 0.6, 0.4, 0.5]
ITEMS = [
    Item(id=f"q{j}", question="q", kind="choice", options={"A": "a", "B": "b"}, answer="A",
         meta={"image_id": image} if image else {})
    for j, image in enumerate(IMAGES)
]  # fmt: skip
IDS = [item.id for item in ITEMS]
SCORE = dict(zip(IDS, SCORES, strict=True))
PREDICTION = dict(zip(IDS, PREDICTED, strict=True))
POPULATION = (sum(PREDICTED), len(IDS))


def strata_of(unit: str) -> dict[str, dict[str, list[str]]]:
    """Stratum → its units (unit → items) under `unit`."""
    units = design.units_of(IDS, unit_keys(ITEMS, unit))
    strata: dict[str, dict[str, list[str]]] = {}
    for key, members in units.items():
        strata.setdefault(STRATUM[IDS.index(members[0])], {})[key] = members
    return strata


def every_estimate(
    unit: str, seats: dict[str, int], tuning: float
) -> list[tuple[aipw.DesignEstimate, float]]:
    """The estimate of every equally likely stratified sample, through the design record's
    layout as `estimate` reads it; with the variance an item-level formula would give."""
    strata = strata_of(unit)
    out = []
    per_stratum = [itertools.combinations(sorted(strata[h]), seats[h]) for h in sorted(strata)]
    for combo in itertools.product(*per_stratum):
        layout = {h: design.Stratum(h, strata[h], list(drawn)).to_json()
                  for h, drawn in zip(sorted(strata), combo, strict=True)}  # fmt: skip
        found = _domain(layout, PREDICTION, SCORE, tuning, POPULATION)
        items_only = aipw.design_estimate(
            POPULATION[1], POPULATION[0],
            [aipw.StratumSample(sum(map(len, strata[h].values())),
                                np.array([SCORE[i] for u in drawn for i in strata[h][u]]),
                                np.array([PREDICTION[i] for u in drawn for i in strata[h][u]]))
             for h, drawn in zip(sorted(strata), combo, strict=True)],
            tuning,
        )  # fmt: skip
        out.append((found, items_only.se**2))
    return out


TRUE_MEAN = float(np.mean(SCORES))


@pytest.mark.parametrize("tuning", [0.0, 0.6, 1.0])
def test_single_items_are_an_unbiased_design_whose_variance_needs_no_cluster_term(
    tuning: float,
) -> None:
    assert all(len(items) == 1 for s in strata_of("item").values() for items in s.values())
    found = every_estimate("item", {"A": 3, "B": 2}, tuning)
    assert len(found) == 20 * 6  # C(6,3) × C(4,2): every item drawn alone
    estimates = [f.estimate for f, _ in found]
    assert np.mean(estimates) == pytest.approx(TRUE_MEAN, abs=1e-12)
    assert np.mean([f.se**2 for f, _ in found]) == pytest.approx(np.var(estimates), rel=1e-9)


@pytest.mark.parametrize("tuning", [0.0, 1.0])
def test_images_are_an_unbiased_design_only_with_the_cluster_aware_variance(
    tuning: float,
) -> None:
    assert sorted(map(len, strata_of("image")["A"].values())) == [1, 2, 3]
    found = every_estimate("image", {"A": 2, "B": 2}, tuning)
    assert len(found) == 3 * 3
    estimates = [f.estimate for f, _ in found]
    assert np.mean(estimates) == pytest.approx(TRUE_MEAN, abs=1e-12)
    assert np.mean([f.se**2 for f, _ in found]) == pytest.approx(np.var(estimates), rel=1e-9)
    item_level = np.mean([v for _, v in found])  # ignoring that an image's answers agree
    assert abs(item_level - np.var(estimates)) > 0.1 * np.var(estimates)


def test_the_fewest_items_a_design_accepts_counts_its_units() -> None:
    items = [
        Item(id=f"q{j}", question="q", kind="choice", options={"A": "a", "B": "b"}, answer="A",
             meta={"image_id": f"img{j // 3}", "modality": ("CT", "MR", "US")[j // 3 % 3]})
        for j in range(90)
    ]  # fmt: skip
    assert smallest_n(items, ["modality"], "item") == 6  # 2 items in each of 3 strata
    assert smallest_n(items, ["modality"], "image") == 17  # 2 images of 3 questions each


ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)


@pytest.fixture
def calibrated(tmp_path: Path) -> tuple[Path, Path]:
    """(benchmark of 90 items, 3 questions an image; bank fitted on 6 runs)."""
    bench = write_bench(tmp_path / "bench", 90, per_image=3)
    runs = write_runs(tmp_path / "runs", bench, ABILITIES)
    bank = tmp_path / "bank.json"
    assert invoke("items", "fit", *runs, "--output", bank).exit_code == 0
    return bench, bank


def draw(bench: Path, bank: Path, out: Path, *unit: str) -> dict:  # type: ignore[type-arg]
    result = invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30,
                    "--stratify", "modality", "--output", out, *unit)  # fmt: skip
    assert result.exit_code == 0, result.output
    return json.loads((out.parent / "subset.json").read_text())["design"]  # type: ignore[no-any-return]


def test_items_are_the_default_unit_even_where_questions_share_an_image(
    calibrated: tuple[Path, Path], tmp_path: Path
) -> None:
    bench, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    layout = draw(bench, bank, subset)
    assert layout["unit"] == "item" and "items" in layout["method"]
    strata = layout["strata"].values()
    assert sum(s["population_units"] for s in strata) == 90
    assert all(units == [unit] for s in strata for unit, units in s["units"].items())
    assert sum(s["sampled_units"] for s in strata) == 30
    run = named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    found = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    assert found["unit"] == "item" and found["n_units"] == found["n"] == 30
    assert "30 sampled items" in invoke("estimate", run, "--bank", bank).stdout


def test_images_as_units_keep_each_images_questions_together(
    calibrated: tuple[Path, Path], tmp_path: Path
) -> None:
    bench, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    layout = draw(bench, bank, subset, "--unit", "image")
    assert layout["unit"] == "image"
    assert all(len(units) == 3 for s in layout["strata"].values() for units in s["units"].values())
    run = named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    found = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    assert found["unit"] == "image" and found["n"] == 3 * found["n_units"]


def test_a_design_recorded_before_units_could_be_chosen_reads_as_images(
    calibrated: tuple[Path, Path], tmp_path: Path
) -> None:
    bench, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    draw(bench, bank, subset, "--unit", "image")
    run = named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    now = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    recorded = json.loads((run / "run.json").read_text())
    del recorded["spec"]["subset"]["design"]["unit"]
    recorded["spec_hash"] = spec_hash(recorded["spec"])
    (run / "run.json").write_text(json.dumps(recorded, indent=1))
    before = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    assert before == now  # same numbers, same unit


def test_an_unknown_unit_is_refused_and_nothing_is_written(
    calibrated: tuple[Path, Path], tmp_path: Path
) -> None:
    bench, bank = calibrated
    out = tmp_path / "sub" / "s.jsonl"
    out.parent.mkdir()
    line = one_error_line(invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30,
                                 "--unit", "cluster", "--output", out))  # fmt: skip
    assert "--unit cluster" in line and "item or image" in line
    assert list(out.parent.iterdir()) == []
