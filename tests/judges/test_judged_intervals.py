"""Intervals of judged tables: a rubric dimension's 0–10 mean gets a CI inside [0, 10] (the CI
of values / 10, scaled back), and the judged closed − open Δ has the CI every medlens gap has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.judges.results import judges_results
from medlens.report.judges import PERCENT, judge_sections
from medlens.runs.judgements import JudgeStore
from medlens.stats.bootstrap import group_cis
from medlens.stats.paired import difference_ci

DIMS = ["consistency", "coherence", "visual_accuracy", "ground_truth_correctness"]


def items(n: int) -> list[Item]:
    return [Item(id=f"i{k}", question="q", kind="open", answer="x",
                 meta={"answer_type": "open", "image_id": f"m{k // 2}"}) for k in range(n)]  # fmt: skip


def write(run: Path, protocol: str, lines: list[dict[str, Any]]) -> None:
    dims = DIMS if protocol == "rubric" else []
    spec = {"schema": 1, "name": "j", "judge": "openai:x?base_url=y", "scope": "all", "repeats": 1,
            "protocol": {"name": protocol, "dimensions": dims, "weights": {d: 1.0 for d in dims},
                         "template_sha256": "t"}, "created": "now"}  # fmt: skip
    store = JudgeStore.open_or_create(run / "judges" / "j", spec)
    for line in lines:
        store.append(line)
    store.close()


def line(item: str, score: float, verdict: Any = None) -> dict[str, Any]:
    return {"id": item, "repeat": 0, "by": "judge", "fingerprint": None, "output": "", "status": "ok",
            "verdict": verdict, "score": score, "error": None, "latency": 0.0, "usage": {}, "cached": False}  # fmt: skip


def test_a_rubric_dimension_ci_lies_on_the_points_scale(tmp_path: Path) -> None:
    its = items(12)
    points = np.array([[8, 4, 5, 3], [9, 5, 6, 4], [7, 4, 4, 5], [8, 6, 5, 2], [9, 3, 6, 4], [8, 5, 5, 5],
                       [7, 4, 3, 4], [8, 5, 6, 6], [9, 4, 5, 3], [8, 6, 4, 4], [7, 5, 5, 5], [9, 4, 6, 2]])  # fmt: skip
    write(tmp_path, "rubric", [line(it.id, float(points[k].mean() / 10),
                                    {"scores": dict(zip(DIMS, map(int, points[k]), strict=True))})
                               for k, it in enumerate(its)])  # fmt: skip
    entry = judges_results(tmp_path, its, {}, [], "replay:x", None)["j"]
    clusters = np.array([it.meta["image_id"] for it in its])
    for d, dim in enumerate(DIMS):
        cell = entry["dimensions"][dim]
        lo, hi = group_cis(points[:, d] / 10, np.zeros(12, dtype=int), clusters)
        assert cell["score"] == pytest.approx(points[:, d].mean())
        assert cell["ci"] == pytest.approx([10 * lo[0], 10 * hi[0]])
        assert 0 <= cell["ci"][0] < cell["score"] < cell["ci"][1] <= 10  # never [1.00, 1.00]
    row = judge_sections({"judges": {"j": entry}})[1].rows[1]
    assert row[3] == f"{points[:, 1].mean():.2f}" and float(row[4].strip("[]").split(",")[1]) > 1.0


def test_the_judged_closed_open_delta_has_a_ci(tmp_path: Path) -> None:
    its = items(10)
    verdicts = [1, 0, 1, 1, 0, 1, 0, 0, 1, 1]
    write(
        tmp_path,
        "equivalence",
        [line(it.id, float(v)) for it, v in zip(its, verdicts, strict=True)],
    )
    closed_scores = np.array([1, 1, 1, 0, 1, 1, 0, 1], dtype=float)
    closed_images = np.array([f"c{k}" for k in range(8)], dtype=object)
    gap = {"overall": {"closed": closed_scores.mean(), "n_closed": 8}}
    closed = (closed_scores, closed_images, [None] * 8)  # different questions: no pairs
    entry = judges_results(tmp_path, its, {}, [], "replay:x", gap, closed)["j"]
    values = np.concatenate([closed_scores, np.array(verdicts, dtype=float)])
    first = np.arange(18) < 8
    clusters = np.concatenate([closed_images.astype(str), [it.meta["image_id"] for it in its]])
    expected = difference_ci(values, first, ~first, clusters)
    assert entry["closed_open"]["delta"] == pytest.approx(closed_scores.mean() - 0.6)
    assert entry["closed_open"]["delta_ci"] == pytest.approx(list(expected))
    notes = " ".join(judge_sections({"judges": {"j": entry}}, PERCENT)[0].notes)
    assert "Δ +15.0 points, 95% CI [" in notes and "(unpaired: different questions)" in notes
