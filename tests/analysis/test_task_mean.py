"""MMBU's across-task mean closed − open Δ with its interval, from the per-task Δs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.task_mean import task_mean_delta
from medlens.cli import app


def test_the_mean_weighs_tasks_alike_and_combines_their_standard_errors() -> None:
    cells = {"a": {"delta": 0.4, "delta_ci": [0.3, 0.5]}, "b": {"delta": 0.2, "delta_ci": [0.0, 0.4]},
             "c": {"delta": None, "delta_ci": None}}  # fmt: skip
    found = task_mean_delta({"by": {"task": cells}})
    assert found is not None and found["tasks"] == 2
    assert found["delta"] == pytest.approx(0.3)
    z = stats.norm.ppf(0.975)
    se = np.sqrt((0.1 / z) ** 2 + (0.2 / z) ** 2) / 2
    assert found["ci"] == pytest.approx([0.3 - z * se, 0.3 + z * se])
    assert task_mean_delta({"by": {"task": {"a": cells["a"]}}}) is None
    assert task_mean_delta(None) is None


def test_a_run_with_three_tasks_reports_the_across_task_mean(tmp_path: Path) -> None:
    rows = []
    for t, task in enumerate(("unanchored", "box", "mask")):
        for n in range(40):
            closed = n % 2 == 0
            rows.append({"id": f"{task}{n}", "question": f"Which {n}?",
                         "kind": "choice" if closed else "open",
                         "options": {"A": "lesion", "B": "normal"} if closed else {},
                         "answer": ("A" if n % (t + 3) else "B") if closed else "lesion",
                         "meta": {"task": task, "answer_type": "closed" if closed else "open"}})  # fmt: skip
    path = tmp_path / "mmbu.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    run = named_run(f"jsonl:{path}", "first", tmp_path / "runs", "m")
    results = json.loads((run / "results.json").read_text())
    per_task = results["closed_open"]["by"]["task"]
    across = results["closed_open_task_mean"]
    assert across["tasks"] == 3
    assert across["delta"] == pytest.approx(np.mean([c["delta"] for c in per_task.values()]))
    assert across["ci"][0] < across["delta"] < across["ci"][1]
    report = CliRunner().invoke(app, ["report", str(run)])
    assert "mean closed − open Δ over 3 tasks" in report.output
    md = CliRunner().invoke(app, ["report", str(run), "--format", "md"])
    assert "mean over 3 tasks (each weighs the same)" in md.output
