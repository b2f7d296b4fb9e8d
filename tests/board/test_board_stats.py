"""The board's statistics against reference libraries: paired tests (scipy, statsmodels, the
McNemar of `compare`), tied groups, correlations with model metadata (scipy), win shares."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from board_runs import MODELS, board_json, demo_runs
from medlens.analysis.compare import mcnemar_exact
from medlens.board.align import Aligned, BoardRun
from medlens.board.groups import win_shares
from medlens.board.meta import ModelMeta, correlation, read_meta, spearman_ci
from medlens.board.ranks import (
    adjusted_pairs,
    cluster_t_matrix,
    mcnemar_matrix,
    pairwise_p,
    tied_groups,
)

__all__ = ["demo_runs"]


def synthetic(scores: np.ndarray, cluster: np.ndarray | None = None) -> Aligned:
    runs, n = scores.shape
    codes = np.arange(n) if cluster is None else np.unique(cluster, return_inverse=True)[1]
    return Aligned(
        runs=[BoardRun(Path(f"r{i}"), f"r{i}", f"model{i}", {}) for i in range(runs)],
        ids=np.array([str(i) for i in range(n)], dtype=object),
        scores=scores.astype(float),
        cluster=codes.astype(np.intp),
        random=np.full(n, 0.25),
        meta={"axis": np.array(["x" if i % 3 else "y" for i in range(n)], dtype=object)},
        dropped={},
    )


def test_mcnemar_matrix_equals_compare_for_every_pair() -> None:
    rng = np.random.default_rng(1)
    scores = (rng.random((4, 150)) < [[0.3], [0.35], [0.5], [0.8]]).astype(float)
    aligned = synthetic(scores)
    p, test = pairwise_p(aligned)
    assert test == "exact McNemar"
    for i in range(4):
        for j in range(4):
            if i != j:
                assert p[i, j] == pytest.approx(mcnemar_exact(scores[i], scores[j]), rel=1e-9)
    assert np.allclose(p, mcnemar_matrix(scores).T)


def test_cluster_t_equals_statsmodels_cluster_robust_ols() -> None:
    import statsmodels.api as sm

    rng = np.random.default_rng(2)
    cluster = rng.integers(0, 25, size=200)
    effect = rng.normal(0, 0.2, size=25)[cluster]
    scores = (rng.random((3, 200)) < 0.4 + effect + [[0.0], [0.05], [0.2]]).astype(float)
    aligned = synthetic(scores, cluster)
    p, test = pairwise_p(aligned)
    assert test.startswith("cluster-robust")
    for i, j in ((0, 1), (0, 2), (1, 2)):
        d = scores[j] - scores[i]
        fit = sm.OLS(d, np.ones_like(d)).fit(
            cov_type="cluster", cov_kwds={"groups": aligned.cluster}, use_t=True
        )
        assert p[i, j] == pytest.approx(float(fit.pvalues[0]), rel=1e-9)
        assert p[j, i] == pytest.approx(p[i, j])


def test_cluster_t_without_shared_images_is_scipys_paired_t_test() -> None:
    rng = np.random.default_rng(4)
    scores = rng.random((3, 60)) * [[1.0], [0.9], [0.7]]  # fractional scores (ROUGE-like)
    p = cluster_t_matrix(synthetic(scores))
    for i, j in ((0, 1), (0, 2), (1, 2)):
        assert p[i, j] == pytest.approx(stats.ttest_rel(scores[i], scores[j]).pvalue, rel=1e-9)


def test_holm_over_pairs_and_tied_groups_walk_the_ranking() -> None:
    from statsmodels.stats.multitest import multipletests

    raw = np.array([[1, 0.3, 0.001, 0.0001], [0.3, 1, 0.2, 0.004], [0.001, 0.2, 1, 0.5],
                    [0.0001, 0.004, 0.5, 1]])  # fmt: skip
    adjusted = adjusted_pairs(raw)
    upper = np.triu_indices(4, 1)
    assert np.allclose(adjusted[upper], multipletests(raw[upper], method="holm")[1])
    assert np.allclose(adjusted, adjusted.T)
    scores = np.array([0.9, 0.8, 0.7, 0.6])
    # 0~1 (p .9 adjusted), 1~2, 2~3; 0 vs 2, 0 vs 3 and 1 vs 3 differ
    assert tied_groups(scores, adjusted) == [[0, 1], [1, 2], [2, 3]]
    assert tied_groups(scores, np.ones((4, 4))) == [[0, 1, 2, 3]]
    assert tied_groups(scores, np.eye(4)) == []


def test_correlation_equals_scipy() -> None:
    rng = np.random.default_rng(5)
    x = rng.lognormal(2, 1, size=12)
    y = 0.3 + 0.02 * np.log(x) + rng.normal(0, 0.02, size=12)
    result = correlation(x, y)
    pearson = stats.pearsonr(x, y)
    fit = stats.linregress(x, y)
    assert result["n"] == 12
    assert result["pearson"] == pytest.approx(pearson.statistic)
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    interval = pearson.confidence_interval(0.95)
    assert result["ci"]["pearson"] == pytest.approx([interval.low, interval.high])
    assert result["slope"] == pytest.approx(fit.slope)
    assert result["intercept"] == pytest.approx(fit.intercept)
    assert result["r2"] == pytest.approx(fit.rvalue**2)
    half = stats.t.ppf(0.975, 10) * fit.stderr
    assert result["slope_ci"] == pytest.approx([fit.slope - half, fit.slope + half])
    # Spearman: Fisher z with Bonett–Wright's variance
    r = result["spearman"]
    se = math.sqrt((1 + r * r / 2) / 9)
    assert result["ci"]["spearman"] == pytest.approx(
        [math.tanh(math.atanh(r) - 1.959963984540054 * se),
         math.tanh(math.atanh(r) + 1.959963984540054 * se)]
    )  # fmt: skip
    assert correlation(x[:2], y[:2])["pearson"] is None  # too few models
    assert correlation(x[:3], y[:3])["ci"]["pearson"] is None
    assert spearman_ci(1.0, 5) == [1.0, 1.0]


def test_win_shares_count_every_model_pair_on_every_item() -> None:
    rng = np.random.default_rng(6)
    scores = (rng.random((5, 90)) < [[0.6], [0.55], [0.3], [0.35], [0.2]]).astype(float)
    cluster = np.arange(90) // 3
    aligned = synthetic(scores, cluster)
    meta = ModelMeta(Path("m.csv"), {}, {"medical": {"r0": "yes", "r1": "yes", "r2": "no",
                                                     "r3": "no", "r4": "no"}})  # fmt: skip
    (entry,) = win_shares(aligned, meta, ["axis"], n_resamples=400)["medical"]
    assert (entry["group"], entry["versus"], entry["models"]) == ("no", "yes", [3, 2])
    wins = sum(int((scores[a] > scores[b]).sum()) for a in (2, 3, 4) for b in (0, 1))
    losses = sum(int((scores[a] < scores[b]).sum()) for a in (2, 3, 4) for b in (0, 1))
    overall = entry["overall"]
    assert (overall["wins"], overall["losses"]) == (wins, losses)
    assert overall["ties"] == 90 * 6 - wins - losses
    assert overall["win_share"] == pytest.approx(wins / (wins + losses))
    assert overall["ci"][0] < overall["win_share"] < overall["ci"][1]
    by = entry["by"]["axis"]
    assert by["x"]["items"] + by["y"]["items"] == 90
    assert by["x"]["wins"] + by["y"]["wins"] == wins


def test_board_meta_correlations_and_win_shares_from_a_csv(
    demo_runs: dict[str, Path], tmp_path: Path
) -> None:
    csv = tmp_path / "models.csv"
    sizes = {"oracle": 70, "random_1": 7, "random_2": 3, "first": 1, "prior": 13}
    csv.write_text("run,params_b,medical\n" + "".join(
        f"{run},{sizes[run]},{'yes' if run in ('oracle', 'prior') else 'no'}\n" for run in MODELS
    ) + "unboarded,5,no\n")  # fmt: skip
    board = board_json(*(demo_runs[m] for m in MODELS), "--meta", csv, "--by", "granularity")
    result = board["correlations"]["params_b"]
    scores = {m["run"]: m["score"] for m in board["models"]}
    x = np.array([sizes[r] for r in MODELS], dtype=float)
    y = np.array([scores[r] for r in MODELS])
    assert result["n"] == 5 and result["missing"] == []
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert result["pearson"] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert result["r2"] == pytest.approx(stats.linregress(x, y).rvalue ** 2)
    box = [next(c for c in board["by"]["granularity"]["box"] if c["run"] == r)["score"]
           for r in MODELS]  # fmt: skip
    assert result["by"]["granularity"]["box"]["pearson"] == pytest.approx(
        stats.pearsonr(x, box).statistic
    )
    pairs = "random_1:oracle,first:prior,random_2:random_1,first:oracle"
    with_pairs = board_json(*(demo_runs[m] for m in MODELS), "--meta", csv, "--pairs", pairs)
    fitted = with_pairs["pair_correlations"]["params_b"]
    tuned = np.array([sizes[p["tuned"]] for p in with_pairs["pairs"]], dtype=float)
    rates = np.array([p["overall"]["wins"] / p["overall"]["n"] for p in with_pairs["pairs"]])
    line = stats.linregress(tuned, rates)
    assert fitted["win_rate"]["n"] == 4
    assert (fitted["win_rate"]["slope"], fitted["win_rate"]["r2"]) == pytest.approx(
        (line.slope, line.rvalue**2)
    )
    (share,) = board["win_shares"]["medical"]
    assert (share["group"], share["versus"], share["models"]) == ("no", "yes", [3, 2])
    assert set(share["by"]["granularity"]) == {"box", "contour", "image", "mask"}


def test_meta_reading_rules(tmp_path: Path) -> None:
    path = tmp_path / "m.csv"
    path.write_text("Run,params_b,family,empty\na,7,llava,\nb,,qwen,\n\nc,1e3,llava,\n")
    meta = read_meta(path)
    assert meta.numeric == {"params_b": {"a": 7.0, "c": 1000.0}}
    assert meta.categorical == {"family": {"a": "llava", "b": "qwen", "c": "llava"}}


@pytest.mark.parametrize("kind", ["binary", "fractional", "clustered"])
def test_cell_cis_are_group_cis_of_each_run_and_value(kind: str) -> None:
    from medlens.board.axes import axis_values
    from medlens.board.ranks import cell_cis
    from medlens.stats.bootstrap import group_cis

    rng = np.random.default_rng(7)
    scores = (rng.random((3, 240)) < [[0.2], [0.5], [0.9]]).astype(float)
    if kind == "fractional":
        scores = scores * rng.random((3, 240))
    cluster = np.arange(240) // 4 if kind == "clustered" else None
    aligned = synthetic(scores, cluster)
    values, codes = axis_values(aligned, "axis")
    lo, hi = cell_cis(aligned, codes, len(values))
    for r in range(3):
        for v in range(len(values)):
            mask = codes == v
            clusters = None if cluster is None else cluster[mask]
            expected = group_cis(scores[r, mask], np.zeros(int(mask.sum())), clusters)
            assert (lo[r, v], hi[r, v]) == pytest.approx(
                (expected[0][0], expected[1][0]), abs=1e-12
            )
