"""``--log mlflow[:URI]`` / ``--log wandb``: a real MLflow SQLite store and W&B in offline mode;
one tracking run per medlens run, re-logging updates it; a tracking failure is one warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app

pytest.importorskip("mlflow")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trackers write defaults (mlruns/, wandb/) under the working folder: keep it the test's."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)


def _mlflow_runs(uri: str) -> list[object]:
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    experiment = client.get_experiment_by_name("medlens")
    return list(client.search_runs([experiment.experiment_id])) if experiment else []


@pytest.mark.slow
def test_mlflow_sqlite_store_holds_one_run_per_medlens_run(tmp_path: Path) -> None:
    from mlflow import MlflowClient

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    out = tmp_path / "runs"
    run = named_run("demo", "random", out, "d", "--limit", "40", "--log", f"mlflow:{uri}")
    first = _mlflow_runs(uri)
    assert len(first) == 1
    results = json.loads((run / "results.json").read_text())
    data = first[0].data  # type: ignore[attr-defined]
    assert data.metrics["overall.score"] == pytest.approx(results["overall"]["score"])
    assert data.metrics["overall.ci_low"] == pytest.approx(results["overall"]["ci"][0])
    assert data.metrics["overall.n"] == 40
    assert data.params["benchmark"] == "demo" and data.params["model"] == "random?seed=0"
    artifacts = {a.path for a in MlflowClient(uri).list_artifacts(first[0].info.run_id)}  # type: ignore[attr-defined]
    assert artifacts == {"report.html", "protocol_card.txt"}
    named_run("demo", "random", out, "d", "--log", f"mlflow:{uri}")  # resumed: all 189 items
    board = CliRunner().invoke(app, ["board", str(run), "--json", "--log", f"mlflow:{uri}"])
    assert board.exit_code == 0, board.output
    again = _mlflow_runs(uri)
    assert len(again) == 1
    assert again[0].data.metrics["overall.n"] == 189  # type: ignore[attr-defined]


def test_a_tracking_failure_is_one_warning_and_the_run_stands(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the store's folder should be")
    result = invoke_run("demo", "random", tmp_path / "runs", "d", "--limit", "10",
                        "--log", f"mlflow:sqlite:///{blocked / 'x.db'}")  # fmt: skip
    assert result.exit_code == 0, result.output
    warnings = [
        line for line in result.output.splitlines() if line.startswith("warning: --log mlflow")
    ]
    assert len(warnings) == 1 and "the run itself is unaffected" in warnings[0]
    assert (tmp_path / "runs" / "d" / "results.json").is_file()


def test_a_bad_log_target_is_refused_before_the_run(tmp_path: Path) -> None:
    result = invoke_run("demo", "random", tmp_path / "runs", "d", "--log", "neptune")
    assert result.exit_code == 2
    assert "expected mlflow[:URI] or wandb" in result.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_wandb_offline_relogs_the_same_run_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path / "wb"))
    monkeypatch.setenv("WANDB_SILENT", "true")
    (tmp_path / "wb").mkdir()
    run = named_run("demo", "random", tmp_path / "runs", "d", "--limit", "20", "--log", "wandb")
    judge_free = CliRunner().invoke(app, ["board", str(run), "--json", "--log", "wandb"])
    assert judge_free.exit_code == 0, judge_free.output
    assert "warning: --log" not in judge_free.output
    offline = sorted((tmp_path / "wb" / "wandb").glob("offline-run-*"))
    assert len(offline) == 2
    assert len({folder.name.rsplit("-", 1)[1] for folder in offline}) == 1  # one W&B run id
