"""Continuous secondary metrics (BLEU, token F1, ROUGE) never get a 0/1 interval, even when the
values a slice holds happen to be all 0 or 1 (issue 36: "BLEU 1.000 [0.463, 1.000]")."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from cli_runs import named_run
from medlens.stats.bootstrap import group_spread
from medlens.stats.intervals import bounded_mean, wilson


def test_continuous_values_take_the_bounded_mean_interval_not_wilson() -> None:
    values = np.ones(6)
    groups = np.zeros(6, np.intp)
    as_binary = group_spread(values, groups).bounds(0.95)
    as_continuous = group_spread(values, groups, continuous=True).bounds(0.95)
    wilson_lo, _ = wilson(np.array([6.0]), np.array([6.0]))
    bounded_lo, _ = bounded_mean(np.array([1.0]), np.array([0.0]), np.array([6.0]))
    assert as_binary[0][0] == wilson_lo[0]
    assert as_continuous[0][0] == bounded_lo[0]  # no images: the item-level interval alone
    assert as_continuous[0][0] != as_binary[0][0]


def test_a_bleu_of_all_ones_is_reported_with_the_continuous_interval(tmp_path: Path) -> None:
    bench = tmp_path / "open.jsonl"
    golds = ["liver", "spleen", "kidney", "heart", "lung", "brain"]
    rows = [
        {
            "id": str(i),
            "question": f"Which organ is shown in image {i}?",
            "kind": "open",
            "answer": g,
        }
        for i, g in enumerate(golds)
    ]
    bench.write_text("".join(json.dumps(row) + "\n" for row in rows))
    run = named_run(f"jsonl:{bench}", "oracle", tmp_path / "runs", "oracle")
    secondary = json.loads((run / "results.json").read_text())["overall"]["secondary"]
    bleu, exact = secondary["bleu1"], secondary["exact"]
    assert bleu["score"] == exact["score"] == 1.0
    ones, groups, images = np.ones(6), np.zeros(6, np.intp), np.arange(6)
    continuous = group_spread(ones, groups, images, continuous=True).bounds(0.95)
    binary = group_spread(ones, groups, images).bounds(0.95)
    assert bleu["ci"][0] == float(continuous[0][0])  # continuous: the bounded-mean family
    assert exact["ci"][0] == float(binary[0][0])  # 0/1 by definition: Wilson's family
    assert bleu["ci"][0] != exact["ci"][0]
