"""Studies with `sample = N` models (issue 31): the bank from the full runs, one design subset
shared by every sampled model, estimated rows on the boards, resuming without refitting, the
plan in --dry-run, and each study-file mistake refused as one line (exit 2, nothing written).

Models are replays of runs whose answers follow a known item response model
(``items_fixtures.write_runs``), so the full runs differ in ability as real models do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from items_fixtures import write_bench, write_runs
from medlens.cli import app
from medlens.runs.store import spec_hash
from study_fixtures import record_ids, write_study

N_ITEMS, N = 60, 24
ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 0.2, 0.8, -0.2)


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    folder = tmp_path_factory.mktemp("answers")
    bench = write_bench(folder / "bench", N_ITEMS)
    return bench, write_runs(folder / "runs", bench, ABILITIES)


def models(runs: list[Path], full: int = 6, sampled: int = 2, n: Any = N) -> dict[str, Any]:
    found: dict[str, Any] = {f"m{k}": f"replay:{runs[k]}" for k in range(full)}
    for k in range(sampled):
        found[f"s{k}"] = {"spec": f"replay:{runs[6 + k]}", "sample": n}
    return found


def study(tmp_path: Path, bench: Path, models: dict[str, Any], *extra: str,
          benchmark: Any = None, boards: Any = None) -> Result:  # fmt: skip
    path = write_study(tmp_path / "s.toml", "s", models, {"b": benchmark or f"jsonl:{bench}"},
                       boards=[{"benchmark": "b"}] if boards is None else boards)  # fmt: skip
    return CliRunner().invoke(
        app, ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports", *extra]
    )


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_sampled_models_share_one_design_subset_and_show_estimates(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    result = study(tmp_path, bench, models(runs))
    assert result.exit_code == 0, result.output
    folder = tmp_path / "studies" / "s"
    subset = folder / "items" / "b" / "subset.jsonl"
    drawn = {json.loads(line)["id"] for line in subset.read_text().splitlines()}
    assert 0 < len(drawn) < N_ITEMS
    for key in ("s0--b", "s1--b"):  # the same items, exactly the subset's
        assert sorted(record_ids(folder / "runs" / key)) == sorted(drawn)
        design = read(folder / "runs" / key / "run.json")["spec"]["subset"]["design"]
        assert design["seed"] == 0 and design["n_requested"] == N and design["unit"] == "item"
    assert len(record_ids(folder / "runs" / "m0--b")) == N_ITEMS
    bank = read(folder / "items" / "b" / "bank.json")
    assert sorted(bank["runs"]) == [f"m{k}--b" for k in range(6)]  # full runs only
    board = read(folder / "boards" / "b.json")
    assert [m["run"] for m in board["models"]] == sorted(
        (f"m{k}" for k in range(6)), key=lambda m: -board_score(board, m)
    )
    rows = {row["run"]: row for row in board["estimated"]}
    assert sorted(rows) == ["s0", "s1"]
    for row in rows.values():
        assert row["label"] == f"estimated from {len(drawn)} items" and row["n"] == len(drawn)
        low, high = row["ci"]
        assert low < row["estimate"] < high and row["population_n"] == N_ITEMS
    assert f"s0 — estimated from {len(drawn)} items" in (folder / "boards" / "b.md").read_text()
    cells = {c["model"]: c for c in read(folder / "boards" / "across.json")["across"]["cells"]}
    assert cells["s1"]["estimated"] == f"estimated from {len(drawn)} items"
    assert cells["s1"]["score"] == rows["s1"]["estimate"] and cells["s1"]["benchmark"] == "jsonl"
    sampling = read(folder / "study.json")["sampling"]["b"]
    assert sampling["bank_fitted"] and sampling["subset_drawn"] and sampling["items"] == len(drawn)
    assert sampling["unit"] == "item"
    assert read(folder / "study.json")["plan"]["runs"]["s0--b"]["sample"] == N
    estimate = CliRunner().invoke(app, ["estimate", str(folder / "runs" / "s0--b"), "--bank",
                                        str(folder / "items" / "b" / "bank.json"), "--json"])  # fmt: skip
    assert estimate.exit_code == 0, estimate.output
    assert json.loads(estimate.stdout)["estimate"] == pytest.approx(rows["s0"]["estimate"])
    index = (folder / "study.md").read_text(encoding="utf-8")
    assert f"] estimated from {len(drawn)} items |" in index  # the matrix on the study page
    assert "s0--b, s1--b: scores on the study's design subset" in index


def board_score(board: dict[str, Any], model: str) -> float:
    return float(next(m["score"] for m in board["models"] if m["run"] == model))


def test_a_rerun_resumes_without_refitting_or_redrawing(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    assert study(tmp_path, bench, models(runs)).exit_code == 0
    folder = tmp_path / "studies" / "s"
    kept = {path: path.read_bytes() for path in (
        folder / "items" / "b" / "bank.json", folder / "items" / "b" / "subset.jsonl",
        folder / "runs" / "s0--b" / "records.jsonl", folder / "runs" / "m0--b" / "records.jsonl",
    )}  # fmt: skip
    mtime = (folder / "items" / "b" / "bank.json").stat().st_mtime_ns
    again = study(tmp_path, bench, models(runs))
    assert again.exit_code == 0, again.output
    assert all(path.read_bytes() == data for path, data in kept.items())
    assert (folder / "items" / "b" / "bank.json").stat().st_mtime_ns == mtime
    sampling = read(folder / "study.json")["sampling"]["b"]
    assert not sampling["bank_fitted"] and not sampling["subset_drawn"]
    assert read(folder / "boards" / "b.json")["estimated"][0]["label"].startswith("estimated")


def test_a_subset_drawn_before_units_could_be_chosen_is_kept_and_read_as_images(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    assert study(tmp_path, bench, models(runs)).exit_code == 0
    folder = tmp_path / "studies" / "s"
    sidecar = folder / "items" / "b" / "subset.json"
    older = read(sidecar)
    del older["design"]["unit"]  # as an earlier medlens wrote it
    sidecar.write_text(json.dumps(older, indent=1))
    for key in ("s0--b", "s1--b"):
        recorded = read(folder / "runs" / key / "run.json")
        del recorded["spec"]["subset"]["design"]["unit"]
        recorded["spec_hash"] = spec_hash(recorded["spec"])
        (folder / "runs" / key / "run.json").write_text(json.dumps(recorded, indent=1))
    kept = (folder / "items" / "b" / "subset.jsonl").read_bytes()
    again = study(tmp_path, bench, models(runs))
    assert again.exit_code == 0, again.output
    assert (folder / "items" / "b" / "subset.jsonl").read_bytes() == kept
    sampling = read(folder / "study.json")["sampling"]["b"]
    assert sampling["unit"] == "image" and not sampling["subset_drawn"]
    assert "unit" not in read(sidecar)["design"]
    rows = read(folder / "boards" / "b.json")["estimated"]
    assert [row["run"] for row in rows] == ["s0", "s1"] and "images" in rows[0]["method"]


def test_a_new_full_model_refits_the_bank_and_keeps_the_subset(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    assert study(tmp_path, bench, models(runs)).exit_code == 0
    folder = tmp_path / "studies" / "s"
    subset = (folder / "items" / "b" / "subset.jsonl").read_bytes()
    grown = {**models(runs), "m8": f"replay:{runs[8]}"}
    again = study(tmp_path, bench, grown)
    assert again.exit_code == 0, again.output
    assert (folder / "items" / "b" / "subset.jsonl").read_bytes() == subset
    sampling = read(folder / "study.json")["sampling"]["b"]
    assert sampling["bank_fitted"] and not sampling["subset_drawn"]
    assert "m8--b" in read(folder / "items" / "b" / "bank.json")["runs"]


def test_sampled_models_wait_for_the_full_runs(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    result = study(tmp_path, bench, models(runs), "--only", "s0")
    assert result.exit_code == 0, result.output
    folder = tmp_path / "studies" / "s"
    state = read(folder / "study.json")["runs"]["s0--b"]
    assert state["state"] == "pending" and "0 of its full runs finished" in state["message"]
    assert not (folder / "runs" / "s0--b").exists() and not (folder / "items").exists()


def test_the_dry_run_shows_the_sampling_plan(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    result = study(tmp_path, bench, models(runs), "--dry-run")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "sampling b: 6 full runs → item bank" in text
    assert f"design subset of {N} items" in text and "2 sampled runs (s0--b, s1--b)" in text
    assert "after the bank" in text
    assert not (tmp_path / "studies").exists()
    one = study(tmp_path, bench, models(runs, sampled=1), "--dry-run")
    assert "→ 1 sampled run (s0--b)," in " ".join(one.output.split()), one.output


BAD = [
    # (models kwargs, benchmark, boards, line, key, what the message says)
    ({"n": 0}, None, None, 9, "models.s0.sample", "expected at least 1"),
    ({"n": "24"}, None, None, 9, "models.s0.sample", "expected a whole number"),
    ({"n": N_ITEMS}, None, None, 9, "models.s0.sample", "not fewer than the 60 items"),
    ({"full": 4}, None, None, 7, "models.s0.sample", "at least 5; this study has 4"),
    ({"sampled": 1}, {"limit": 30}, None, 11, "benchmarks.b.limit", "limit with models that"),
    ({"sampled": 1}, {"probe": "no-image"}, None, 11, "benchmarks.b.probe", "probe with"),
    ({}, {"stratify": "colour"}, None, 12, "benchmarks.b.stratify", "colour"),
    ({"n": 4}, {"stratify": "modality"}, None, 9, "models.s0.sample", "at least 6"),
    ({}, None, [{"benchmark": "b", "pairs": ["m0:s1"]}], 15, "boards[1].pairs", "m0:s1"),
]


@pytest.mark.parametrize(("kwargs", "bench_keys", "boards", "line", "key", "says"), BAD)
def test_a_bad_sampled_study_is_one_line_and_writes_nothing(
    tmp_path: Path, answers: tuple[Path, list[Path]], kwargs: dict[str, Any],
    bench_keys: dict[str, Any] | None, boards: Any, line: int, key: str, says: str,
) -> None:  # fmt: skip
    bench, runs = answers
    benchmark = None if bench_keys is None else {"spec": f"jsonl:{bench}", **bench_keys}
    result = study(tmp_path, bench, models(runs, **kwargs), benchmark=benchmark, boards=boards)
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.count("\n") == 0 and "Traceback" not in message, message
    assert message.startswith(f"medlens: error: {tmp_path / 's.toml'}, line {line}, key {key}")
    assert says in message, message
    assert not (tmp_path / "studies").exists()


def test_sampled_models_must_ask_for_the_same_n(
    tmp_path: Path, answers: tuple[Path, list[Path]]
) -> None:
    bench, runs = answers
    both = models(runs)
    both["s1"] = {**both["s1"], "sample": 30}
    result = study(tmp_path, bench, both)
    assert result.exit_code == 2 and result.output.strip().count("\n") == 0, result.output
    assert "line 10, key models.s1.sample: 30: models.s0 samples 24" in result.output
    assert not (tmp_path / "studies").exists()
