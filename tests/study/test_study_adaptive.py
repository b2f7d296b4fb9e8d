"""Studies with adaptive models (issue 43: `adaptive = {bank, target_halfwidth, ...}`): the runs
are adaptive, a baseline names another model's full run of the study, boards show the runs'
estimates "estimated from N of M items", and each study-file mistake is one line (exit 2,
nothing written)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from items_fixtures import invoke, write_bench, write_runs
from medlens.cli import app
from study_fixtures import write_study

N_ITEMS = 200
ABILITIES = (-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 0.3)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("adaptive_study")
    bench = write_bench(folder / "bench", N_ITEMS)
    runs = write_runs(folder / "runs", bench, ABILITIES)
    bank = folder / "bank.json"
    assert invoke("items", "fit", *runs[:6], "--output", bank).exit_code == 0
    return {"bench": bench, "runs": runs, "bank": bank}


def study(tmp_path: Path, world: dict[str, Any], adaptive: Any, **extra: Any) -> Result:
    models: dict[str, Any] = {"old": f"replay:{world['runs'][5]}",
                              "new": {"spec": f"replay:{world['runs'][6]}", "adaptive": adaptive}}  # fmt: skip
    path = write_study(tmp_path / "s.toml", "s", models, {"b": extra.pop("benchmark", f"jsonl:{world['bench']}")},
                       boards=[{"benchmark": "b", **extra}])  # fmt: skip
    return CliRunner().invoke(
        app, ["study", str(path), "--out", str(tmp_path / "studies"), "--no-reports"]
    )


def test_an_adaptive_model_runs_adaptively_and_its_board_row_is_estimated(
    tmp_path: Path, world: dict[str, Any]
) -> None:
    adaptive = {"bank": str(world["bank"]), "target_halfwidth": 0.08, "baseline": "old"}
    result = study(tmp_path, world, adaptive)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "studies" / "s"
    run = json.loads((folder / "runs" / "new--b" / "run.json").read_text())
    assert run["spec"]["adaptive"]["bank"]["sha256"]
    assert run["spec"]["adaptive"]["baseline"]["path"] == str(
        (folder / "runs" / "old--b").resolve()
    )
    asked = len(run["adaptive"]["asked"])
    assert run["adaptive"]["status"] == "target reached" and asked < N_ITEMS
    board = json.loads((folder / "boards" / "b.json").read_text())
    assert [m["run"] for m in board["models"]] == ["old"]
    (row,) = board["estimated"]
    assert row["run"] == "new" and row["label"] == f"estimated from {asked} of {N_ITEMS} items"
    low, high = row["ci"]
    assert low < row["estimate"] < high and high - low <= 2 * 0.08 + 1e-9
    assert (
        f"new — estimated from {asked} of {N_ITEMS} items"
        in (folder / "boards" / "b.md").read_text()
    )
    again = study(tmp_path, world, adaptive)  # a rerun asks nothing more
    assert again.exit_code == 0, again.output
    rerun = json.loads((folder / "runs" / "new--b" / "run.json").read_text())["adaptive"]["asked"]
    assert len(rerun) == asked


@pytest.mark.parametrize(
    ("adaptive", "extra", "message"),
    [
        (
            {"bank": "B", "target_halfwidth": 0.5},
            {},
            "key models.new.adaptive.target_halfwidth: 0.5",
        ),
        ({"bank": "B", "target_halfwidth": 0}, {}, "expected a half-width above 0"),
        ({"target_halfwidth": 0.05}, {}, "key models.new.adaptive: needs a predictor"),
        ({"baseline": "nobody", "target_halfwidth": 0.05}, {}, "'nobody': not another model"),
        (
            {"bank": "B", "target_halfwidth": 0.05, "cap": 3},
            {},
            "key models.new.adaptive.cap: unknown key",
        ),
        ({"bank": "B", "target_halfwidth": 0.05}, {"pairs": ["old:new"]}, "new is adaptive"),
        ({"bank": "/no/such/bank.json", "target_halfwidth": 0.05}, {}, "/no/such/bank.json"),
    ],
)
def test_a_study_file_mistake_is_one_line_and_writes_nothing(
    tmp_path: Path,
    world: dict[str, Any],
    adaptive: dict[str, Any],
    extra: dict[str, Any],
    message: str,
) -> None:
    adaptive = {k: (str(world["bank"]) if v == "B" else v) for k, v in adaptive.items()}
    result = study(tmp_path, world, adaptive, **extra)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.output
    assert not (tmp_path / "studies").exists()


def test_a_bank_of_another_benchmark_is_refused_at_its_key(
    tmp_path: Path, world: dict[str, Any]
) -> None:
    other = write_bench(tmp_path / "other", 50, name="other.jsonl")
    result = study(tmp_path, world, {"bank": str(world["bank"]), "target_halfwidth": 0.05},
                   benchmark=f"jsonl:{other}")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert (
        "key models.new.adaptive.bank: benchmark 'b'" in result.output
        and "a bank of" in result.output
    )
    assert not (tmp_path / "studies").exists()
