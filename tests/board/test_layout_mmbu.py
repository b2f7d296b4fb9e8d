"""`medlens board --layout mmbu` over replayed runs of known correctness and a loopback
equivalence judge: micro-F1 closed / open per task, the paired Δ, the Random rows, base vs
adapted, and the medical-vs-general win share per sub-modality, each against a hand count."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from board_runs import board_json
from medlens.analysis.reference_tables import load_reference
from medlens.stats.bootstrap import group_cis
from medlens.stats.paired import paired_ci
from paper_fixtures import MMBU_PER_TASK, MMBU_TASKS, SUBMODALITIES, judge_runs, mmbu_runs

Answer = Callable[[int, int, bool], str]
PREFIX = {"classification": "unanchored", "box_classification": "box_anchored",
          "mask_classification": "mask_anchored", "detection": "detection"}  # fmt: skip


def model(closed_right: int, open_modes: list[str]) -> Answer:
    def answer(t: int, k: int, is_open: bool) -> str:
        if is_open:
            return open_modes[(t + k) % len(open_modes)]
        return "right" if (5 * t + k) % 6 < closed_right else "wrong"

    return answer


MODELS: dict[str, Answer] = {
    "gen": model(3, ["gold", "negated", "synonym"]),
    "med": model(4, ["gold", "synonym"]),
    "gen2": model(2, ["negated", "synonym"]),
    "med2": model(5, ["gold", "negated"]),
}
MEDICAL = {"gen": "no", "med": "yes", "gen2": "no", "med2": "yes"}


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("mmbu-layout")
    runs = mmbu_runs(folder, MODELS)
    judge_runs(runs, "equivalence", "eq")
    meta = folder / "meta.csv"
    meta.write_text("run,train_m,medical\n" + "".join(
        f"{name},{3 * i},{MEDICAL[name]}\n" for i, name in enumerate(MODELS)))  # fmt: skip
    return board_json(*runs.values(), "--layout", "mmbu", "--allow-partial", "--judge", "eq", "--pairs", "gen:med,gen2:med2",
                      "--meta", meta)  # fmt: skip


def item_score(answer: Answer, t: int, k: int, is_open: bool) -> float:
    """The main score of one item: right closed answers and boxes 1; open classification as the
    equivalence judge reads it (gold and synonym are equivalent, a negation is not)."""
    mode = answer(t, k, is_open)
    if not is_open or MMBU_TASKS[t] == "detection":
        return 1.0 if mode in ("right", "gold", "synonym") else 0.0
    return 1.0 if mode in ("gold", "synonym") else 0.0


def test_closed_open_and_delta_cells_equal_the_hand_computation(board: dict[str, Any]) -> None:
    layout = board["layout"]
    assert layout["name"] == "mmbu" and layout["score_source"] == "combined:eq"
    assert "open classification by the equivalence judge eq" in layout["title"]
    rows = {r["run"]: r for r in layout["rows"] if "run" in r}
    for name, answer in MODELS.items():
        for t, task in enumerate(MMBU_TASKS):
            prefix = PREFIX[task]
            images = np.array([f"{task[:3]}{k}" for k in range(MMBU_PER_TASK)])
            closed = np.array([item_score(answer, t, k, False) for k in range(MMBU_PER_TASK)])
            opened = np.array([item_score(answer, t, k, True) for k in range(MMBU_PER_TASK)])
            cells = rows[name]["cells"]
            lo, hi = group_cis(closed, np.zeros(MMBU_PER_TASK, dtype=int), images)
            assert cells[f"{prefix}_closed"]["value"] == pytest.approx(closed.mean())
            assert cells[f"{prefix}_closed"]["ci"] == pytest.approx([lo[0], hi[0]])
            assert cells[f"{prefix}_open"]["value"] == pytest.approx(opened.mean())
            delta = cells[f"{prefix}_delta"]
            assert (
                delta["value"] == pytest.approx((closed - opened).mean())
                and delta["n"] == MMBU_PER_TASK
            )
            assert delta["ci"] == pytest.approx(list(paired_ci(opened, closed, images)))
            if task != "detection":
                assert cells[f"{prefix}_open"]["coverage"] == {"verdicts": 6, "scope": 6}
            else:
                assert "coverage" not in cells[f"{prefix}_open"]  # boxes are scored by IoU


def test_random_rows_and_every_published_row(board: dict[str, Any]) -> None:
    rows = board["layout"]["rows"]
    chance = next(r for r in rows if r.get("chance"))["cells"]
    assert {c: v["value"] for c, v in chance.items()} == pytest.approx(
        {f"{p}_closed": 1 / 3 for p in PREFIX.values()})  # three options / candidate boxes  # fmt: skip
    published = [r for r in rows if r["published"]]
    assert len(published) == 18 and [r["model"] for r in published] == [
        r.model for r in load_reference("mmbu").rows
    ]
    random = next(r for r in published if r["model"] == "Random")["cells"]
    assert random == {"unanchored_closed": {"value": 0.199}, "box_anchored_closed": {"value": 0.162},
                      "mask_anchored_closed": {"value": 0.183}, "detection_closed": {"value": 0.172}}  # fmt: skip


def test_each_run_and_the_published_rows_get_mmbus_headline_gap(board: dict[str, Any]) -> None:
    """The headline is the three classification tasks' mean paired Δ (the paper's definition),
    the four-task mean (what the paper's printed 0.26 matches on its own table) beside it."""
    from medlens.report.board_layout import gap_notes

    gap = board["layout"]["gap"]
    rows = {r["run"]: r for r in board["layout"]["rows"] if "run" in r}
    for name in MODELS:
        deltas = [rows[name]["cells"][f"{PREFIX[t]}_delta"]["value"] for t in MMBU_TASKS]
        assert gap["runs"][name]["four_tasks"]["delta"] == pytest.approx(np.mean(deltas))
        assert gap["runs"][name]["headline"]["delta"] == pytest.approx(np.mean(deltas[:3]))
    assert f"{gap['published']['headline']:.2f}" == "0.34"
    assert f"{gap['published']['four_tasks']:.2f}" == "0.26"
    notes = gap_notes(board["layout"])
    assert notes[-1].startswith(
        "published (17 models): mean closed − open Δ over the 3 classification tasks 0.3408"
    )
    assert any(n.startswith("gen: MMBU headline (the paper's definition)") for n in notes)


def test_base_vs_adapted_with_win_tie_loss_shares(board: dict[str, Any]) -> None:
    pairs = board["layout"]["pairs"]
    for row in pairs["rows"]:
        base = np.array(
            [item_score(MODELS[row["base"]], 0, k, False) for k in range(MMBU_PER_TASK)]
        )
        tuned = np.array(
            [item_score(MODELS[row["tuned"]], 0, k, False) for k in range(MMBU_PER_TASK)]
        )
        assert (row["base_f1"], row["tuned_f1"]) == pytest.approx((base.mean(), tuned.mean()))
        assert row["change"] == pytest.approx(tuned.mean() - base.mean())
        assert row["ci"][0] <= row["change"] <= row["ci"][1]
        assert (row["win_share"], row["tie_share"], row["loss_share"]) == pytest.approx(
            ((tuned > base).mean(), (tuned == base).mean(), (tuned < base).mean()))  # fmt: skip
    assert next((p["base"], p["adapted"]) for p in pairs["published"]) == (
        "Gemma-3-4B",
        "MedGemma-4B",
    )
    assert set(pairs["win_rate_fit"]) == {"train_m"}  # two pairs: no line through two points
    assert pairs["win_rate_fit"]["train_m"]["slope"] is None


def test_win_share_per_sub_modality_is_a_hand_count(board: dict[str, Any]) -> None:
    entry = board["win_shares"]["medical"][0]
    assert (entry["group"], entry["versus"]) == ("no", "yes")
    per_value = entry["per_value"]
    assert per_value["axis"] == "metadata_submodality" and per_value["values"] == 3
    means: dict[str, dict[str, float]] = {}
    for name, answer in MODELS.items():
        by_value: dict[str, list[float]] = {v: [] for v in SUBMODALITIES}
        for t in range(len(MMBU_TASKS)):
            for k in range(MMBU_PER_TASK):
                for is_open in (False, True):
                    by_value[SUBMODALITIES[(t + k) % 3]].append(item_score(answer, t, k, is_open))
        means[name] = {v: float(np.mean(s)) for v, s in by_value.items()}
    leads = [
        means[a][v] - means[b][v]
        for a in ("gen", "gen2")
        for b in ("med", "med2")
        for v in SUBMODALITIES
    ]
    wins, losses = sum(x > 1e-12 for x in leads), sum(x < -1e-12 for x in leads)
    assert (per_value["comparisons"], per_value["wins"], per_value["losses"]) == (12, wins, losses)
    assert per_value["win_share"] == pytest.approx(wins / 12)
    assert per_value["mean_lead"] == pytest.approx(np.mean(leads))
    assert entry["overall"]["items"] == 48  # beside it, the per-item share of the same groups
    assert json.dumps(board)
