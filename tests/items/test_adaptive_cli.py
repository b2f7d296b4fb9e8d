"""`medlens run --adaptive`, `estimate` and `gate` on adaptive runs, end to end; their refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from items_fixtures import invoke, one_error_line, write_bench, write_runs

ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("adaptive")
    bench = write_bench(root / "bench", 300, per_image=2)
    runs = write_runs(root / "runs", bench, (*ABILITIES, 0.3, 0.35), seed=1)
    bank = root / "bank.json"
    assert invoke("items", "fit", *runs[:6], "--output", bank).exit_code == 0
    other = write_bench(root / "other", 120, name="other.jsonl")
    other_runs = write_runs(root / "other_runs", other, ABILITIES, prefix="o")
    other_bank = root / "other_bank.json"
    assert invoke("items", "fit", *other_runs, "--output", other_bank).exit_code == 0
    return {"root": root, "bench": bench, "bank": bank, "new": runs[6], "old": runs[7],
            "other_bank": other_bank, "other_run": other_runs[0]}  # fmt: skip


def adaptive(world: dict[str, Path], out: Path, *extra: str | Path, model: Path | None = None):  # type: ignore[no-untyped-def]
    return invoke(
        "run", "--bench", f"jsonl:{world['bench']}", "--model", f"replay:{model or world['new']}",
        "--out", out, "--name", "a", "--no-cache", *extra,
    )  # fmt: skip


def full_score(run: Path) -> float:
    scores = [
        json.loads(line)["score"] for line in (run / "records.jsonl").read_text().splitlines()
    ]
    return sum(scores) / len(scores)


def test_the_run_prints_what_estimate_gives_and_records_its_design(
    world: dict[str, Path], tmp_path: Path
) -> None:
    result = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.08",
                      "--concurrency", "5")  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = [line for line in result.stdout.splitlines() if line.startswith("estimated ")]
    again = invoke("estimate", tmp_path / "a", "--bank", world["bank"])
    assert again.exit_code == 0, again.output
    assert printed and printed[0] in again.stdout
    found = json.loads(invoke("estimate", tmp_path / "a", "--json").stdout)
    run = json.loads((tmp_path / "a" / "run.json").read_text())
    design = run["adaptive"]
    assert found["ci"] == pytest.approx(design["estimate"]["ci"], abs=1e-6)
    assert found["half_width"] <= 0.08 and design["status"] == "target reached"
    lo, hi = found["ci"]
    assert lo < full_score(world["new"]) < hi  # this seed's interval covers the truth
    records = (tmp_path / "a" / "records.jsonl").read_text().splitlines()
    assert [row["id"] for row in design["asked"]] == [json.loads(x)["id"] for x in records]
    assert [row["batch"] for row in design["asked"][:10]] == [0] * 5 + [1] * 5
    assert all(0 < row["probability"] <= 1 for row in design["asked"])
    assert run["spec"]["adaptive"]["bank"]["sha256"] and found["n"] == len(records) < 300


def test_a_rerun_asks_nothing_and_a_smaller_target_goes_on_from_there(
    world: dict[str, Path], tmp_path: Path
) -> None:
    first = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.1")
    assert first.exit_code == 0, first.output
    asked = json.loads((tmp_path / "a" / "run.json").read_text())["adaptive"]["asked"]
    again = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.1")
    assert json.loads((tmp_path / "a" / "run.json").read_text())["adaptive"]["asked"] == asked
    assert f"resuming: {len(asked)} of" in again.output
    more = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.06")
    assert more.exit_code == 0, more.output
    longer = json.loads((tmp_path / "a" / "run.json").read_text())["adaptive"]["asked"]
    assert longer[: len(asked)] == asked and len(longer) > len(asked)


def test_the_same_seed_and_answers_give_the_same_items(
    world: dict[str, Path], tmp_path: Path
) -> None:
    orders = []
    for out in (tmp_path / "x", tmp_path / "y"):
        assert (
            adaptive(world, out, "--adaptive", world["bank"], "--target-halfwidth", "0.1").exit_code
            == 0
        )
        orders.append(json.loads((out / "a" / "run.json").read_text())["adaptive"]["asked"])
    assert orders[0] == orders[1]
    seeded = adaptive(world, tmp_path / "z", "--adaptive", world["bank"], "--target-halfwidth",
                      "0.1", "--seed", "7")  # fmt: skip
    assert seeded.exit_code == 0
    other = json.loads((tmp_path / "z" / "a" / "run.json").read_text())["adaptive"]["asked"]
    assert [r["id"] for r in other] != [r["id"] for r in orders[0]]


def test_max_items_caps_the_run_and_says_so(world: dict[str, Path], tmp_path: Path) -> None:
    result = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.01",
                      "--max-items", "20")  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(invoke("estimate", tmp_path / "a", "--json").stdout)
    assert found["n"] == 20 and found["status"] == "max items asked" and found["half_width"] > 0.01
    assert "stopped: max items asked" in " ".join(result.stdout.split())


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--target-halfwidth", "0"], "--target-halfwidth 0: expected a half-width above 0"),
        (["--target-halfwidth", "-0.1"], "--target-halfwidth -0.1"),
        (["--target-halfwidth", "0.5"], "--target-halfwidth 0.5"),
        (["--target-halfwidth", "0.7"], "--target-halfwidth 0.7"),
        (
            ["--target-halfwidth", "0.05", "--max-items", "4"],
            "--max-items 4: below the first batch",
        ),
        ([], "--target-halfwidth: an adaptive run needs"),
        (["--target-halfwidth", "0.05", "--limit", "10"], "--limit: an adaptive run draws"),
        (["--target-halfwidth", "0.05", "--stratify", "organ"], "--stratify: unknown axis 'organ'"),
    ],
)
def test_bad_adaptive_input_is_one_line_exit_2_and_writes_nothing(
    world: dict[str, Path], tmp_path: Path, extra: list[str], message: str
) -> None:
    out = tmp_path / "runs"
    line = one_error_line(adaptive(world, out, "--adaptive", world["bank"], *extra))
    assert message in line, line
    assert not out.exists()


def test_a_bank_or_baseline_of_another_benchmark_is_refused(
    world: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "runs"
    line = one_error_line(
        adaptive(world, out, "--adaptive", world["other_bank"], "--target-halfwidth", "0.05")
    )
    assert "a bank of jsonl:" in line and "other.jsonl" in line
    line = one_error_line(
        adaptive(world, out, "--baseline", world["other_run"], "--target-halfwidth", "0.05")
    )
    assert f"--baseline {world['other_run']}: ran on" in line and "not on the benchmark" in line
    assert not out.exists()


def test_a_baseline_missing_items_or_itself_estimated_is_refused(
    world: dict[str, Path], tmp_path: Path
) -> None:
    partial = write_runs(tmp_path / "partial", world["bench"], (0.0,), prefix="p")[0]
    lines = (partial / "records.jsonl").read_text().splitlines()
    (partial / "records.jsonl").write_text("\n".join(lines[:-5]) + "\n")
    out = tmp_path / "runs"
    line = one_error_line(adaptive(world, out, "--baseline", partial, "--target-halfwidth", "0.05"))
    assert "5 of 300 items have no score" in line
    made = adaptive(
        world, tmp_path / "made", "--adaptive", world["bank"], "--target-halfwidth", "0.1"
    )
    assert made.exit_code == 0
    line = one_error_line(adaptive(world, out, "--baseline", tmp_path / "made" / "a",
                                   "--target-halfwidth", "0.05"))  # fmt: skip
    assert "is an adaptive run" in line and "itself an estimate" in line
    assert not out.exists()


def test_estimate_with_a_baseline_adds_the_difference(
    world: dict[str, Path], tmp_path: Path
) -> None:
    result = adaptive(world, tmp_path, "--adaptive", world["bank"], "--baseline", world["old"],
                      "--target-halfwidth", "0.06")  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(
        invoke("estimate", tmp_path / "a", "--json", "--baseline", world["old"]).stdout
    )
    base = full_score(world["old"])
    assert found["baseline_score"] == pytest.approx(base, abs=1e-6)
    assert found["delta"] == pytest.approx(found["estimate"] - base, abs=1e-6)
    assert found["delta_ci"] == pytest.approx(
        [found["ci"][0] - base, found["ci"][1] - base], abs=1e-6
    )
    assert found["predictor"]["baseline"]["scores_sha256"]


def test_the_baseline_alone_predicts_and_a_changed_bank_is_named(
    world: dict[str, Path], tmp_path: Path
) -> None:
    result = adaptive(world, tmp_path, "--baseline", world["old"], "--target-halfwidth", "0.08")
    assert result.exit_code == 0, result.output
    assert "predicted by the baseline" in " ".join(result.stdout.split())
    line = one_error_line(invoke("estimate", tmp_path / "a", "--bank", world["bank"]))
    assert "designed without a bank" in line
    banked = adaptive(
        world, tmp_path / "b", "--adaptive", world["bank"], "--target-halfwidth", "0.1"
    )
    assert banked.exit_code == 0
    line = one_error_line(invoke("estimate", tmp_path / "b" / "a", "--bank", world["other_bank"]))
    assert "not the bank" in line and "designed with" in line


def test_a_gate_on_identical_runs_passes_with_an_interval_around_zero(
    world: dict[str, Path], tmp_path: Path
) -> None:
    full = invoke("gate", world["old"], "--baseline", world["old"], "--max-drop", "0.02", "--json")
    assert full.exit_code == 0, full.output
    found = json.loads(full.stdout)
    assert found["verdict"] == "pass" and found["delta"] == 0
    assert found["delta_ci"][0] < 0 < found["delta_ci"][1]
    same = adaptive(world, tmp_path, "--adaptive", world["bank"], "--baseline", world["old"],
                    "--target-halfwidth", "0.02", model=world["old"])  # fmt: skip
    assert same.exit_code == 0, same.output
    result = invoke("gate", tmp_path / "a", "--baseline", world["old"], "--max-drop", "0.05")
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert text.startswith("gate pass:") and "items asked" in text
    lo, hi = json.loads(invoke("gate", tmp_path / "a", "--baseline", world["old"], "--max-drop",
                               "0.05", "--json").stdout)["delta_ci"]  # fmt: skip
    assert lo < 0 < hi and hi - lo <= 0.04 + 1e-9


def test_gate_fails_a_worse_checkpoint_and_is_inconclusive_when_it_cannot_tell(
    world: dict[str, Path], tmp_path: Path
) -> None:
    runs = sorted((world["root"] / "runs").iterdir())
    worst, best = runs[0], runs[5]
    result = invoke("gate", worst, "--baseline", best, "--max-drop", "0.02")
    assert result.exit_code == 1 and result.stdout.startswith("gate fail:")
    wide = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.2")
    assert wide.exit_code == 0
    result = invoke("gate", tmp_path / "a", "--baseline", world["old"], "--max-drop", "0.0")
    assert result.exit_code == 3 and "straddles" in result.stdout
    line = one_error_line(
        invoke("gate", tmp_path / "a", "--baseline", world["old"], "--max-drop", "-1")
    )
    assert "--max-drop -1" in line


def test_a_model_stronger_than_every_calibration_run_is_flagged_and_covered(
    world: dict[str, Path], tmp_path: Path
) -> None:
    strong = write_runs(tmp_path / "strong", world["bench"], (3.5,), seed=9, prefix="s")[0]
    result = adaptive(world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.05",
                      model=strong)  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(invoke("estimate", tmp_path / "a", "--json").stdout)
    assert found["extrapolating"] is True
    assert any("may lie above the calibration runs' range" in reason for reason in found["reasons"])
    lo, hi = found["ci"]
    assert lo <= full_score(strong) <= hi
    assert "extrapolating:" in " ".join(result.stdout.split())


def test_board_and_report_show_an_adaptive_run_as_estimated_from_n_of_m(
    world: dict[str, Path], tmp_path: Path
) -> None:
    assert (
        adaptive(
            world, tmp_path, "--adaptive", world["bank"], "--target-halfwidth", "0.08"
        ).exit_code
        == 0
    )
    runs = sorted((world["root"] / "runs").iterdir())[:3]
    board = json.loads(invoke("board", *runs, tmp_path / "a", "--json").stdout)
    (row,) = board["estimated"]
    n = json.loads(invoke("estimate", tmp_path / "a", "--json").stdout)["n"]
    assert row["label"] == f"estimated from {n} of 300 items" and row["run"] == "a"
    assert "a" not in [m["run"] for m in board["models"]]
    report = " ".join(invoke("report", tmp_path / "a").stdout.split())
    assert f"estimated from {n} of 300 items" in report and "not asked (adaptive run)" in report
