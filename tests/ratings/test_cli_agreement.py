"""`medlens agreement`: judge vs people (figures equal scipy/sklearn), win ratios, inter-judge."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score

from medlens.judges.verdicts import inter_judge_agreement
from medlens.ratings.winratio import win_ratios
from ratings_helpers import (
    RUBRIC,
    fill_xlsx,
    invoke,
    make_runs,
    medlens,
    tree,
    write_judge,
)

WEIGHTS = dict(zip(RUBRIC, (1, 1, 4, 4), strict=True))


@pytest.fixture(scope="module")
def base_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """This module's runs have 24 items, so that every one is sampled and rated."""
    return make_runs(tmp_path_factory.mktemp("base-runs"), n_items=24)


def _rubric_judge(run: Path, seed: int, name: str = "judge") -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    scores = {f"q{i}": {d: rng.randint(0, 10) for d in RUBRIC} for i in range(20)}
    write_judge(run, name, "rubric", {i: [s] for i, s in scores.items()})
    return scores


def _human_csv(path: Path, rows: list[dict[str, object]]) -> Path:
    header = list(rows[0])
    lines = [",".join(header)] + [",".join(str(r.get(h, "")) for h in header) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _noisy(scores: dict[str, dict[str, int]], seed: int, rater: str) -> list[dict[str, object]]:
    rng = random.Random(seed)
    return [{"id": i, "rater": rater, **{d: min(10, max(0, v + rng.randint(-3, 3))) for d, v in s.items()}}
            for i, s in scores.items()]  # fmt: skip


def test_judge_human_agreement_equals_scipy_and_sklearn(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    judged = _rubric_judge(run, 1)
    human = _noisy(judged, 2, "dr1")
    human.insert(0, {**human[5], "coherence": 0})  # replaced by the later row of that item
    result = medlens(
        "agreement",
        run,
        "--judge",
        "judge",
        "--human",
        _human_csv(tmp_path / "h.csv", human),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert set(report["dimensions"]) == set(RUBRIC)
    for dim in RUBRIC:
        cell = report["dimensions"][dim]
        assert {"n", "spearman", "spearman_ci", "kappa", "mad"} <= set(cell)
        x = [float(h[dim]) for h in human[1:]]  # type: ignore[arg-type]
        y = [float(judged[str(h["id"])][dim]) for h in human[1:]]
        assert cell["n"] == 20
        assert cell["spearman"] == pytest.approx(spearmanr(x, y).statistic)
        assert cell["kappa"] == pytest.approx(
            cohen_kappa_score(x, y, weights="quadratic", labels=[float(v) for v in range(11)])
        )
        assert cell["mad"] == pytest.approx(np.mean(np.abs(np.array(x) - np.array(y))))
        assert cell["spearman_ci"][0] <= cell["spearman"] <= cell["spearman_ci"][1]
    assert report["raters"] is None and report["win_ratios"] is None
    text = invoke("agreement", run, "--judge", "judge", "--human", tmp_path / "h.csv")
    assert text.returncode == 0 and "ground_truth_correctness" in text.stdout


def test_equivalence_judge_against_an_exported_and_filled_sheet(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    run, _ = runs
    rng = random.Random(5)
    verdicts = {f"q{i}": rng.random() < 0.6 for i in range(24)}
    write_judge(run, "eq", "equivalence",
                {i: ["rule"] if n < 3 else [v, v, not v] for n, (i, v) in enumerate(verdicts.items())})  # fmt: skip
    sheet = tmp_path / "s.xlsx"
    assert (
        invoke(
            "ratings", "export", run, "--judge", "eq", "--sample", "24", "--output", sheet
        ).returncode
        == 0
    )
    human = {i: (v if rng.random() < 0.8 else not v) for i, v in verdicts.items()}
    filled = fill_xlsx(sheet, tmp_path / "f.xlsx",
                       {i: {"equivalent": "yes" if h else "no", "rater": "a"} for i, h in human.items()})  # fmt: skip
    result = invoke("agreement", run, "--judge", "eq", "--human", filled, "--json")
    assert result.returncode == 0, result.stderr
    cell = json.loads(result.stdout)["dimensions"]["equivalent"]
    judge = [True if n < 3 else v for n, v in enumerate(verdicts.values())]  # rules: equivalent
    assert cell["n"] == 24 and cell["kappa_weights"] is None
    assert cell["kappa"] == pytest.approx(cohen_kappa_score(list(human.values()), judge))


def test_several_raters_give_inter_rater_agreement(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = runs
    judged = _rubric_judge(run, 1)
    rows = _noisy(judged, 2, "a") + _noisy(judged, 3, "b")
    result = invoke(
        "agreement",
        run,
        "--judge",
        "judge",
        "--human",
        _human_csv(tmp_path / "h.csv", rows),
        "--json",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["dimensions"]["coherence"]["n"] == 40
    assert report["dimensions"]["coherence"]["items"] == 20
    text = invoke("agreement", run, "--judge", "judge", "--human", tmp_path / "h.csv")
    assert text.returncode == 0 and "inter-rater coherence: Krippendorff" in text.stdout
    pair = report["raters"]["coherence"]["pairs"][0]
    a = [float(r["coherence"]) for r in rows[:20]]  # type: ignore[arg-type]
    b = [float(r["coherence"]) for r in rows[20:]]  # type: ignore[arg-type]
    assert pair["n"] == 20 and pair["spearman"] == pytest.approx(spearmanr(a, b).statistic)


def test_win_ratios_by_hand() -> None:
    human = [
        {"x": 0.9, "y": 0.1, "z": 0.5},
        {"x": 0.2, "y": 0.1, "z": 0.5},
        {"x": 0.2, "y": 0.3, "z": 0.5},
    ]
    judge = [
        {"x": 0.9, "y": 0.9, "z": 0.5},
        {"x": 0.2, "y": 0.1, "z": 0.5},
        {"x": 0.1, "y": 0.3, "z": 0.5},
    ]
    result = win_ratios(["m1", "m2", "m3"], human, judge)
    # one dict per model. People, item x: m1 beats both (1); m2 loses to m1, ties m3 (0.25);
    # item y: m3 beats both (1), m1 and m2 tie each other (0.25); item z: all tie (0.5)
    assert result["items"] == 3 and result["comparisons"] == 6
    assert result["models"]["m1"]["human"] == pytest.approx((1 + 0.25 + 0.5) / 3)
    assert result["models"]["m3"]["human"] == pytest.approx((0.25 + 1 + 0.5) / 3)
    # judge, item x: m1 1, m2 0.5 (beats m3), m3 0; item y: m1 1, m2 0, m3 0.5; z: 0.5 each
    assert result["models"]["m1"]["judge"] == pytest.approx((1 + 1 + 0.5) / 3)
    assert result["models"]["m2"]["judge"] == pytest.approx((0.5 + 0 + 0.5) / 3)
    assert result["models"]["m3"]["judge"] == pytest.approx((0 + 0.5 + 0.5) / 3)
    diffs = [abs(m["human"] - m["judge"]) for m in result["models"].values()]
    assert result["largest_difference"] == pytest.approx(max(diffs))


def test_two_runs_give_win_ratios_by_people_and_by_the_judge(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    rand, oracle = runs
    judged = {"rand": _rubric_judge(rand, 1), "orac": _rubric_judge(oracle, 7)}
    files = []
    for name, seed in (("rand", 2), ("orac", 8)):
        files += [
            "--human",
            str(_human_csv(tmp_path / f"{name}.csv", _noisy(judged[name], seed, "a"))),
        ]
    result = invoke("agreement", rand, oracle, "--judge", "judge", *files, "--json")
    assert result.returncode == 0, result.stderr
    wins = json.loads(result.stdout)["win_ratios"]
    assert wins["items"] == 20

    def score(values: dict[str, float]) -> float:
        return sum(WEIGHTS[d] * values[d] for d in RUBRIC) / 100

    judge_r = [score(judged["rand"][f"q{i}"]) for i in range(20)]
    judge_o = [score(judged["orac"][f"q{i}"]) for i in range(20)]
    expected = np.mean([(r > o) + 0.5 * (r == o) for r, o in zip(judge_r, judge_o, strict=True)])
    assert wins["models"][str(rand)]["judge"] == pytest.approx(expected)
    assert wins["models"][str(oracle)]["judge"] == pytest.approx(1 - expected)
    assert wins["largest_difference"] == pytest.approx(
        abs(wins["models"][str(rand)]["human"] - wins["models"][str(rand)]["judge"])
    )
    assert set(wins["dimensions"]) == set(RUBRIC)  # Med-CMR validates the judge per dimension
    assert wins["largest_dimension_difference"]["value"] == pytest.approx(
        max(d["largest_difference"] for d in wins["dimensions"].values()))  # fmt: skip
    text = invoke("agreement", rand, oracle, "--judge", "judge", *files)
    assert text.returncode == 0 and "largest |people − judge| win-ratio difference" in text.stdout
    assert (
        "largest per-dimension difference:" in text.stdout and "criterion ≤ 0.0449" in text.stdout
    )


def test_inter_judge_form(runs: tuple[Path, Path]) -> None:
    run, _ = runs
    _rubric_judge(run, 1, "a")
    _rubric_judge(run, 2, "b")
    _rubric_judge(run, 3, "c")
    one = invoke("agreement", run, "--judge", "a", "--judge", "b", "--json")
    other = medlens("agreement", run, "--judges", "a,b", "--json")
    assert one.returncode == 0 and other.returncode == 0, one.stderr + other.stderr
    assert (
        json.loads(one.stdout) == json.loads(other.stdout) == inter_judge_agreement(run, ["a", "b"])
    )
    three = invoke("agreement", run, "--judges", "a,b,c")
    assert three.returncode == 0 and "Krippendorff" in three.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("rater,coherence\na,3\n", "h.csv, row 1, column 'id': no 'id' column"),
        ("id,rater,other\nq1,a,3\n", "h.csv, row 1: no dimension column"),
        (
            "id,rater,coherence\nq1,a,3\nq2,a,good\n",
            "h.csv, row 3, column 'coherence': 'good' is not a number",
        ),
        (
            "id,rater,coherence\nq1,a,11\n",
            "row 2, column 'coherence': 11 is outside the scale 0–10",
        ),
        (
            "id,rater,coherence\nq1,a,3\nnope,a,3\n",
            "h.csv, row 3, column 'id': id 'nope' is not an item",
        ),
    ],
)
def test_bad_human_files_are_one_line_exit_2(
    runs: tuple[Path, Path], tmp_path: Path, content: str, message: str
) -> None:
    run, _ = runs
    _rubric_judge(run, 1)
    (tmp_path / "h.csv").write_text(content, encoding="utf-8")
    before = tree(run)
    result = invoke("agreement", run, "--judge", "judge", "--human", tmp_path / "h.csv")
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert tree(run) == before


def test_bad_agreement_arguments(runs: tuple[Path, Path], tmp_path: Path) -> None:
    run, _ = runs
    _rubric_judge(run, 1)
    (tmp_path / "h.csv").write_text("id,coherence\nq1,3\n", encoding="utf-8")
    result = medlens("agreement", run, "--judges", "judge,other", "--human", tmp_path / "h.csv")
    assert result.returncode == 2 and "exactly one --judge" in result.stderr
    assert "Traceback" not in result.stderr
    result = invoke("agreement", run, "--judge", "judge")
    assert result.returncode == 2 and "two or more judges" in result.stderr
