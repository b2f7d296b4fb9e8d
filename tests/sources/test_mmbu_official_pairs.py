"""MMBU's official inference layout (one TSV per task and form, no template column) pairs the
closed and open forms of each sample, so its closed − open Δ is printed (issue 49: the MMBU
layout's Δ printed "–" on the official files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_mmbu_official_outputs import official_folder, outputs
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app
from medlens.core.items import Item
from medlens.scoring.closed_open import pair_key


def test_the_official_layout_prints_the_paired_delta(tmp_path: Path) -> None:
    root = official_folder(tmp_path / "mmbu")
    out = tmp_path / "out"
    outputs(out, "m_classification_closed_VQA.jsonl", "closed", ["A", "B", "C", "B"])  # 4 right
    outputs(out, "m_classification_open_VQA.jsonl", "open", ["brain", "kidney", "liver", "heart"])
    run = named_run(f"mmbu:{root}", f"replay:{out}", tmp_path / "runs", "official")
    gap = json.loads((run / "results.json").read_text())["closed_open"]["overall"]
    assert gap["paired"] is True and gap["n_pairs"] == 4
    assert gap["delta"] == pytest.approx(0.5)  # closed 4/4 − open 2/4, sample by sample
    shown = CliRunner().invoke(
        app, ["board", str(run), "--layout", "mmbu", "--allow-partial", "--json"]
    )
    assert shown.exit_code == 0, shown.output
    (row,) = [r for r in json.loads(shown.output)["layout"]["rows"] if r.get("run") == "official"]
    assert row["cells"]["unanchored_delta"]["value"] == pytest.approx(0.5)
    assert row["cells"]["unanchored_delta"]["n"] == 4
    text = (
        CliRunner().invoke(app, ["board", str(run), "--layout", "mmbu", "--allow-partial"]).output
    )
    line = next(line for line in text.splitlines() if line.startswith("│ official "))
    assert line.rstrip(" │").endswith("0.500 [-0.166–0.832]")  # unanchored Δ, no longer "–"


@pytest.mark.parametrize("task", ["classification", "box_classification", "mask_classification"])
def test_every_mmbu_task_pairs_without_a_template(task: str) -> None:
    meta = {"task": task, "image_id": "images/a.png", "answer_type": "closed"}
    closed = Item("c", "What is shown?", "choice", {"A": "nevus", "B": "Melanoma"}, "B", meta=meta)
    opened = Item("o", "What is shown?", "open", answer="melanoma",
                  meta={**meta, "answer_type": "open"})  # fmt: skip
    assert pair_key(closed) == pair_key(opened) is not None


def test_a_benchmark_without_mmbu_tasks_or_templates_pairs_nothing() -> None:
    """SLAKE and VQA-RAD ask different questions in their two forms: unpaired Δ there."""
    item = Item("s", "Is this CT?", "yes_no", answer="yes", meta={"task": "modality"})
    assert pair_key(item) is None
