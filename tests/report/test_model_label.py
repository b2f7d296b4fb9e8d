"""A models table names a model by a short label, not a whole path and content hash (issue 36:
"long replay:…?sha256=… labels"); the run column and the JSON keep what tells runs apart."""

from __future__ import annotations

import pytest

from medlens.report.board_sections import models_table
from medlens.report.model_label import model_label


@pytest.mark.parametrize(
    ("spec", "label"),
    [
        ("replay:/tmp/ws/medcmr/base.csv?sha256=98f53a9503421746", "replay:base.csv"),
        ("replay:/runs/gmai-val-first/", "replay:gmai-val-first"),
        ("hf:/models/llava-1.5-7b", "hf:llava-1.5-7b"),
        ("openai:gpt-4o?base_url=http://127.0.0.1:8000/v1", "openai:gpt-4o"),
        ("openai:Qwen/Qwen2-VL-7B", "openai:Qwen/Qwen2-VL-7B"),
        ("random", "random"),
    ],
)
def test_model_label(spec: str, label: str) -> None:
    assert model_label(spec) == label


def test_models_table_shows_the_short_label_and_points_to_the_reason() -> None:
    model = {
        "name": "replay:/tmp/ws/medcmr/base.csv?sha256=98f53a9503421746",
        "run": "cmr-base", "rank": 1, "rank_ci": [1, 2], "n": 70, "images": 35,
        "score": 0.577, "ci": [0.456, 0.696], "small": False,
        "not_comparable": "70 items, the published set has 20653",
    }  # fmt: skip
    board = {
        "models": [model], "chance": {"n": 70, "score": 0.12}, "references": [],
        "not_comparable": {"cmr-base": "not comparable: 70 items, the published set has 20653"},
        "tied": [], "tied_test": "Holm", "align": {"dropped": {}, "n": 70},
    }  # fmt: skip
    table = models_table(board)
    shown = [cell for cell in table.rows[0][0] if isinstance(cell, str)]
    assert "replay:base.csv — not comparable (see below)" in shown  # the sort key keeps the spec
    assert any("cmr-base: not comparable: 70 items" in note for note in table.notes)
