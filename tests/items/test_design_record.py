"""A run on a designed subset records the design compactly (the drawn units and the hash of the
population layout, which stays in subset.json): the same estimate as from the whole layout, an
estimate by axis reads the layout from subset.json (refused when it is gone or another design's),
and a run recorded with the whole layout still resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runs import invoke_run, named_run
from items_fixtures import invoke, one_error_line, write_bench, write_runs
from medlens.runs.store import spec_hash
from medlens.sources.sidecar import layout_hash

ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)


@pytest.fixture
def sampled(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(bank, subset file, a run of `first` on the subset)."""
    bench = write_bench(tmp_path / "bench", 90, per_image=3)
    bank = tmp_path / "bank.json"
    runs = write_runs(tmp_path / "runs", bench, ABILITIES)
    assert invoke("items", "fit", *runs, "--output", bank).exit_code == 0
    subset = tmp_path / "sub" / "s.jsonl"
    result = invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30,
                    "--stratify", "modality", "--output", subset)  # fmt: skip
    assert result.exit_code == 0, result.output
    return bank, subset, named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")


def run_json(run: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((run / "run.json").read_text())


def with_whole_layout(run: Path, subset: Path) -> None:
    """Rewrite run.json as a run recorded before designs were compact."""
    content = run_json(run)
    content["spec"]["subset"]["design"] = json.loads((subset.parent / "subset.json").read_text())[
        "design"
    ]
    content["spec_hash"] = spec_hash(content["spec"])
    (run / "run.json").write_text(json.dumps(content, indent=1))


def test_the_run_records_only_the_drawn_units_and_the_layout_hash(
    sampled: tuple[Path, Path, Path],
) -> None:
    _, subset, run = sampled
    whole = json.loads((subset.parent / "subset.json").read_text())["design"]
    recorded = run_json(run)["spec"]["subset"]["design"]
    assert recorded["layout"] == {"sha256": layout_hash(whole["strata"])}
    for key, stratum in recorded["strata"].items():
        assert sorted(stratum["units"]) == sorted(stratum["sampled"])
        assert stratum["population_units"] == len(whole["strata"][key]["units"])
    items = [i for s in recorded["strata"].values() for ids in s["units"].values() for i in ids]
    assert len(items) == len(set(items)) == 30  # the drawn items only, not the 90


def test_the_compact_record_gives_the_estimate_of_the_whole_layout(
    sampled: tuple[Path, Path, Path],
) -> None:
    bank, subset, run = sampled
    compact = json.loads(invoke("estimate", run, "--bank", bank, "--by", "modality",
                                "--json").stdout)  # fmt: skip
    with_whole_layout(run, subset)
    whole = json.loads(invoke("estimate", run, "--bank", bank, "--by", "modality",
                              "--json").stdout)  # fmt: skip
    assert compact["estimate"] == pytest.approx(whole["estimate"], abs=1e-9)
    assert compact["ci"] == pytest.approx(whole["ci"], abs=1e-9)
    assert compact["by"] and compact["by"].keys() == whole["by"].keys()
    for value, found in compact["by"].items():
        assert found["estimate"] == pytest.approx(whole["by"][value]["estimate"], abs=1e-9)
        assert found["population_n"] == whole["by"][value]["population_n"]
    assert sum(found["population_n"] for found in compact["by"].values()) == 90


def test_an_estimate_by_axis_needs_the_layout_in_subset_json(
    sampled: tuple[Path, Path, Path],
) -> None:
    bank, subset, run = sampled
    sidecar = subset.parent / "subset.json"
    content = json.loads(sidecar.read_text())
    first = next(iter(content["design"]["strata"].values()))
    first["units"].popitem()  # another population layout
    sidecar.write_text(json.dumps(content))
    line = one_error_line(invoke("estimate", run, "--bank", bank, "--by", "modality"))
    assert str(run) in line and str(sidecar) in line and "population layout" in line
    whole = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    assert whole["population_n"] == 90  # the estimate itself needs no layout


def test_a_run_recorded_with_the_whole_layout_resumes(
    sampled: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    _, subset, run = sampled
    with_whole_layout(run, subset)
    records = (run / "records.jsonl").read_text().splitlines()
    (run / "records.jsonl").write_text("\n".join(records[:-3]) + "\n")
    result = invoke_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    assert result.exit_code == 0, result.output
    assert len((run / "records.jsonl").read_text().splitlines()) == len(records)
