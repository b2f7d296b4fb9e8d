"""`medlens items fit|sample` and `medlens estimate` end to end, and their refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_runs import named_run
from items_fixtures import invoke, one_error_line, write_bench, write_runs

ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)


@pytest.fixture
def calibrated(tmp_path: Path) -> tuple[Path, list[Path], Path]:
    bench = write_bench(tmp_path / "bench", 90, per_image=3)
    runs = write_runs(tmp_path / "runs", bench, ABILITIES)
    bank = tmp_path / "bank.json"
    result = invoke("items", "fit", *runs, "--output", bank)
    assert result.exit_code == 0, result.output
    return bench, runs, bank


def test_fit_writes_the_bank_with_the_issues_keys(
    calibrated: tuple[Path, list[Path], Path],
) -> None:
    _, runs, bank_path = calibrated
    bank = json.loads(bank_path.read_text())
    assert set(bank["benchmark"]) >= {"content_hash", "spec", "n_items"}
    assert bank["benchmark"]["n_items"] == 90
    item = bank["items"]["q0"]
    assert set(item) == {"difficulty", "discrimination", "guess", "p_correct", "n_runs"}
    assert item["guess"] == 0.25 and item["n_runs"] == 6
    assert set(bank["runs"]["r0"]) >= {"ability", "se"}
    assert bank["runs"]["r5"]["ability"] > bank["runs"]["r0"]["ability"]
    assert set(bank["fit"]) >= {"method", "log_likelihood", "converged", "held_out_log_loss"}
    assert bank["fit"]["held_out_log_loss"] < bank["fit"]["held_out_baseline_log_loss"]
    again = bank_path.parent / "again.json"
    assert invoke("items", "fit", *runs, "--output", again).exit_code == 0
    assert again.read_bytes() == bank_path.read_bytes()  # deterministic


def test_fit_prints_each_runs_score_with_n_and_interval(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    from scipy.stats import binomtest

    _, runs, bank_path = calibrated
    result = invoke("items", "fit", *runs, "--output", tmp_path / "b.json")
    assert result.exit_code == 0, result.output
    bank = json.loads(bank_path.read_text())
    for run, values in bank["runs"].items():
        k, n = round(values["score"] * values["n"]), values["n"]
        ci = binomtest(k, n).proportion_ci(method="wilsoncc")
        line = next(x for x in result.stdout.splitlines() if x.strip().startswith(f"{run}:"))
        assert f"[{ci.low:.1%}, {ci.high:.1%}] (n={n}, Wilson)" in line, line
    assert "answered by some run" not in result.stdout  # every item was answered


def test_sample_counts_one_stratum_in_the_singular(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    bench, _, bank = calibrated
    out = tmp_path / "one" / "s.jsonl"
    result = invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 3, "--output", out)
    assert result.exit_code == 0, result.output
    strata = json.loads((out.parent / "subset.json").read_text())["design"]["strata"]
    text = " ".join(result.output.split())
    assert len(strata) == 1 and "(1 stratum, 3 items drawn;" in text, text


def test_fit_refuses_fewer_than_five_runs(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    _, runs, _ = calibrated
    out = tmp_path / "few.json"
    line = one_error_line(invoke("items", "fit", *runs[:4], "--output", out))
    assert "at least 5 runs" in line and str(runs[0]) in line
    assert not out.exists()


def test_fit_refuses_runs_on_other_contents(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    _, runs, _ = calibrated
    other = write_bench(tmp_path / "other", 80)
    stranger = write_runs(tmp_path / "others", other, (0.0,), prefix="x")[0]
    out = tmp_path / "mixed.json"
    line = one_error_line(invoke("items", "fit", *runs[:5], stranger, "--output", out))
    assert str(stranger) in line and "same benchmark content" in line
    assert not out.exists()


def test_sample_estimate_round_trip(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    bench, _, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    result = invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30,
                    "--stratify", "modality", "--unit", "image", "--output", subset)  # fmt: skip
    assert result.exit_code == 0, result.output
    sidecar = json.loads((subset.parent / "subset.json").read_text())
    layout = sidecar["design"]
    assert layout["unit"] == "image"
    assert sum(s["population_items"] for s in layout["strata"].values()) == 90
    units = {u for s in layout["strata"].values() for u in s["units"]}
    assert len(units) == 30  # 3 questions per image: images are the units
    for stratum in layout["strata"].values():
        assert stratum["inclusion_probability"] == pytest.approx(
            stratum["sampled_units"] / stratum["population_units"]
        )
    run = named_run(f"jsonl:{subset}", "oracle", tmp_path / "new", "oracle")
    found = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    assert set(found) >= {
        "estimate",
        "ci",
        "n",
        "population_n",
        "method",
        "wilson_ci",
        "extrapolating",
    }
    assert found["population_n"] == 90 and found["n"] == sidecar["n_items"]
    assert found["estimate"] == pytest.approx(1.0)  # the oracle is right everywhere
    assert found["extrapolating"] is True  # stronger than every calibration run
    assert found["ci"][0] < 0.95 and found["ci"][1] == 1.0  # not the point [1, 1]
    text = invoke("estimate", run, "--bank", bank, "--by", "modality").stdout
    assert "extrapolating" in text and "modality=CT" in text
    assert "the interval is Wilson's on them" in " ".join(text.split())


def test_estimate_refuses_a_run_not_on_a_designed_subset(
    calibrated: tuple[Path, list[Path], Path],
) -> None:
    _, runs, bank = calibrated
    line = one_error_line(invoke("estimate", runs[0], "--bank", bank))
    assert str(runs[0]) in line and "items sample" in line


def test_estimate_and_sample_refuse_a_bank_of_another_benchmark(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    bench, _, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    assert (
        invoke(
            "items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30, "--output", subset
        ).exit_code
        == 0
    )
    run = named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    other = write_bench(tmp_path / "other", 60)
    other_bank = tmp_path / "other_bank.json"
    assert (
        invoke(
            "items", "fit", *write_runs(tmp_path / "o", other, ABILITIES), "--output", other_bank
        ).exit_code
        == 0
    )
    line = one_error_line(invoke("estimate", run, "--bank", other_bank))
    assert str(run) in line and "bank of" in line
    out = tmp_path / "sub2" / "s.jsonl"
    line = one_error_line(
        invoke(
            "items", "sample", f"jsonl:{bench}", "--bank", other_bank, "--n", 20, "--output", out
        )
    )
    assert str(other_bank) in line
    assert not out.parent.exists() or not any(out.parent.iterdir())


def test_bad_bank_file_is_one_line(
    tmp_path: Path, calibrated: tuple[Path, list[Path], Path]
) -> None:
    bench, _, _ = calibrated
    bad = tmp_path / "bad.json"
    bad.write_text('{"items": {}}')
    line = one_error_line(
        invoke(
            "items",
            "sample",
            f"jsonl:{bench}",
            "--bank",
            bad,
            "--n",
            20,
            "--output",
            tmp_path / "o" / "s.jsonl",
        )
    )
    assert str(bad) in line


def test_an_audit_report_or_a_list_given_as_bank_is_named_plainly(
    tmp_path: Path, calibrated: tuple[Path, list[Path], Path]
) -> None:
    """No Python exception text ("list indices must be integers…") in the refusal."""
    _, runs, _ = calibrated
    audit = tmp_path / "audit.json"
    found = invoke("items", "audit", *runs, "--json")
    assert found.exit_code == 0, found.output
    audit.write_text(found.stdout)
    line = one_error_line(invoke("items", "audit", *runs, "--bank", audit))
    assert str(audit) in line and "`medlens items audit` report" in line
    assert "indices" not in line and "Error" not in line
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    line = one_error_line(invoke("items", "audit", *runs, "--bank", listed))
    assert line.endswith("it holds a JSON list, not an object")


def test_report_and_board_show_the_estimate(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    bench, runs, bank = calibrated
    subset = tmp_path / "sub" / "s.jsonl"
    assert (
        invoke(
            "items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 30, "--output", subset
        ).exit_code
        == 0
    )
    run = named_run(f"jsonl:{subset}", "first", tmp_path / "new", "first")
    found = json.loads(invoke("estimate", run, "--bank", bank, "--json").stdout)
    report = invoke("report", run)
    assert report.exit_code == 0, report.output
    assert (
        "full-benchmark estimate" in report.stdout and f"{found['estimate']:.3f}" in report.stdout
    )
    md = invoke("report", run, "--format", "md").stdout
    assert "full-benchmark estimate" in md
    board = invoke("board", *runs, run, "--json")
    assert board.exit_code == 0, board.output
    data = json.loads(board.stdout)
    assert [m["run"] for m in data["models"]] and "first" not in [m["run"] for m in data["models"]]
    (row,) = data["estimated"]
    assert row["label"] == f"estimated from {found['n']} items"
    assert row["estimate"] == pytest.approx(found["estimate"], abs=1e-6)
    text = invoke("board", *runs, run).stdout
    assert f"estimated from {found['n']}" in text


def test_fit_refuses_an_output_folder_that_does_not_exist(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    _, runs, _ = calibrated
    out = tmp_path / "missing" / "bank.json"
    assert str(out) in one_error_line(invoke("items", "fit", *runs, "--output", out))
    assert not out.parent.exists()


def test_fit_never_replaces_a_file_without_force(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    """A mistyped --output (a run's records.jsonl) was overwritten by the bank."""
    _, runs, bank = calibrated
    records = runs[0] / "records.jsonl"
    before = records.read_bytes()
    line = one_error_line(invoke("items", "fit", *runs, "--output", records))
    assert str(records) in line and "--force" in line
    assert records.read_bytes() == before
    assert str(runs[0]) in one_error_line(invoke("items", "fit", *runs, "--output", runs[0]))
    old = bank.read_bytes()
    again = invoke("items", "fit", *runs, "--output", bank, "--force")
    assert again.exit_code == 0, again.output
    assert bank.read_bytes() == old  # deterministic


def test_sample_refuses_n_above_the_benchmark(
    calibrated: tuple[Path, list[Path], Path], tmp_path: Path
) -> None:
    bench, _, bank = calibrated
    out = tmp_path / "big" / "s.jsonl"
    line = one_error_line(
        invoke("items", "sample", f"jsonl:{bench}", "--bank", bank, "--n", 500, "--output", out)
    )
    assert "--n 500" in line and "90 items" in line
    assert not out.exists()
