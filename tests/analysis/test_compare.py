"""`medlens compare` and medlens.analysis.compare: pairing, paired CI, exact McNemar, win/tie/loss, probes."""

from __future__ import annotations

import json
from math import comb
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from medlens.analysis.compare import compare_runs, mcnemar_exact
from medlens.cli import app
from medlens.core.errors import RunMismatchError, SpecError
from slice_runs import spec, write_run

runner = CliRunner()


def exact_mcnemar_by_hand(b_only: int, a_only: int) -> float:
    """Two-sided exact McNemar: 2 × the smaller binomial(discordant, 1/2) tail, capped at 1."""
    total = b_only + a_only
    tail = sum(comb(total, k) for k in range(min(b_only, a_only) + 1)) / 2**total
    return float(min(1.0, 2 * tail))


def paired_rows(
    pairs: list[tuple[float, float]], level_of: Any = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    a_rows, b_rows = [], []
    for i, (a, b) in enumerate(pairs):
        level = level_of(i) if level_of else "image"
        meta = {"dept": "X" if i % 2 else "Y", "level": level, "granularity": level}
        a_rows.append({"meta": meta, "score": a})
        b_rows.append({"meta": meta, "score": b})
    return a_rows, b_rows


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[tuple[float, float]]]:
    rng = np.random.default_rng(7)
    a = (rng.random(400) < 0.45).astype(float)
    b = np.where(rng.random(400) < 0.25, 1.0 - a, a)  # B flips a quarter of A's answers
    b[:40] = 1.0  # and gets the first 40 right
    pairs = list(zip(a.tolist(), b.tolist(), strict=True))
    folder = tmp_path_factory.mktemp("compare")
    a_rows, b_rows = paired_rows(pairs, lambda i: ["image", "box"][i % 3 == 0])
    return write_run(folder / "a", a_rows), write_run(folder / "b", b_rows), pairs


def test_overall_counts_and_mcnemar(pair: tuple[Path, Path, list[tuple[float, float]]]) -> None:
    run_a, run_b, pairs = pair
    result = compare_runs(run_a, run_b)
    overall = result.overall
    wins = sum(1 for a, b in pairs if b > a)
    losses = sum(1 for a, b in pairs if b < a)
    assert (overall.wins, overall.losses, overall.ties) == (wins, losses, 400 - wins - losses)
    assert overall.n == 400
    assert overall.difference == pytest.approx((wins - losses) / 400)
    assert overall.mcnemar_p == pytest.approx(exact_mcnemar_by_hand(wins, losses))


def test_paired_ci_agrees_with_a_brute_force_paired_bootstrap(
    pair: tuple[Path, Path, list[tuple[float, float]]],
) -> None:
    run_a, run_b, pairs = pair
    overall = compare_runs(run_a, run_b).overall
    diff = np.array([b - a for a, b in pairs])
    rng = np.random.default_rng(11)
    means = [diff[rng.integers(0, diff.size, diff.size)].mean() for _ in range(3000)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert overall.ci[0] <= overall.difference <= overall.ci[1]
    assert abs(overall.ci[0] - lo) < 0.015 and abs(overall.ci[1] - hi) < 0.015


def test_by_axis_cells_partition_the_items(
    pair: tuple[Path, Path, list[tuple[float, float]]],
) -> None:
    run_a, run_b, _ = pair
    result = compare_runs(run_a, run_b, ["level", "dept"])
    assert [dict(c.key)["level"] for c in result.by["level"]] == ["box", "image"]
    for cells in result.by.values():
        assert sum(c.n for c in cells) == 400
        assert sum(c.wins for c in cells) == result.overall.wins
    with pytest.raises(SpecError, match="unknown axis 'nope'"):
        compare_runs(run_a, run_b, ["nope"])


def test_mcnemar_edge_cases() -> None:
    same = np.array([1.0, 0.0, 1.0])
    assert mcnemar_exact(same, same) == 1.0
    assert mcnemar_exact(np.array([0.5, 1.0]), np.array([1.0, 1.0])) is None
    assert mcnemar_exact(np.zeros(6), np.ones(6)) == pytest.approx(exact_mcnemar_by_hand(6, 0))


def test_different_benchmarks_are_refused(tmp_path: Path) -> None:
    rows = [{"meta": {"dept": "X", "level": "image"}, "score": 1.0}]
    run_a = write_run(tmp_path / "a", rows, spec(content_hash="aaaa"))
    run_b = write_run(tmp_path / "b", rows, spec(content_hash="bbbb"))
    with pytest.raises(RunMismatchError, match="paired comparison needs the same items"):
        compare_runs(run_a, run_b)
    result = runner.invoke(app, ["compare", str(run_a), str(run_b)])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1 and "cannot compare" in result.output


def test_items_scored_in_one_run_only_are_left_out(tmp_path: Path) -> None:
    a_rows, b_rows = paired_rows([(1.0, 0.0), (0.0, 0.0), (1.0, 1.0)])
    b_rows[2] = {**b_rows[2], "error": {"type": "timeout", "message": "slow"}}
    result = compare_runs(write_run(tmp_path / "a", a_rows), write_run(tmp_path / "b", b_rows))
    assert (result.overall.n, result.only_a, result.only_b) == (2, 1, 0)
    assert result.overall.losses == 1


def test_fractional_scores_have_no_mcnemar(tmp_path: Path) -> None:
    a_rows, b_rows = paired_rows([(0.5, 1.0), (0.25, 0.0), (1.0, 1.0)])
    result = compare_runs(write_run(tmp_path / "a", a_rows), write_run(tmp_path / "b", b_rows))
    assert result.overall.mcnemar_p is None
    assert (result.overall.wins, result.overall.ties, result.overall.losses) == (1, 1, 1)


def test_probe_run_shows_slices_beside_the_random_baseline(tmp_path: Path) -> None:
    a_rows, b_rows = paired_rows(
        [(1.0, 0.0)] * 30 + [(1.0, 1.0)] * 30, lambda i: ["image", "box"][i % 2]
    )
    probed = spec()
    probed["probe"] = "blank-image"
    run_a, run_b = write_run(tmp_path / "a", a_rows), write_run(tmp_path / "b", b_rows, probed)
    result = compare_runs(run_a, run_b)
    assert result.probe_b == "blank-image" and list(result.by) == ["granularity"]
    box = result.by["granularity"][0]
    assert dict(box.key) == {"granularity": "box"} and box.random == pytest.approx(0.25)
    cli = runner.invoke(app, ["compare", str(run_a), str(run_b), "--by", "level"])
    assert cli.exit_code == 0, cli.output
    assert "probe: blank-image" in cli.output and "chance %" in cli.output and "25.0" in cli.output


def test_cli_json(pair: tuple[Path, Path, list[tuple[float, float]]]) -> None:
    run_a, run_b, _ = pair
    result = runner.invoke(app, ["compare", str(run_a), str(run_b), "--by", "dept", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["overall"]["n"] == 400 and set(data["by"]) == {"dept"}
    assert {"difference", "ci", "wins", "ties", "losses", "mcnemar_p", "random"} <= set(
        data["overall"]
    )


def test_by_cells_carry_holm_or_bh_adjusted_p(
    pair: tuple[Path, Path, list[tuple[float, float]]],
) -> None:
    from statsmodels.stats.multitest import multipletests

    run_a, run_b, _ = pair
    for flag, method in (("holm", "holm"), ("bh", "fdr_bh")):
        result = runner.invoke(
            app, ["compare", str(run_a), str(run_b), "--by", "dept", "--adjust", flag, "--json"]
        )
        assert result.exit_code == 0, result.output
        cells = json.loads(result.output)["by"]["dept"]
        expected = multipletests([c["p"] for c in cells], method=method)[1]
        assert [c["p_adjusted"] for c in cells] == pytest.approx(expected.tolist())
        assert all(c["adjust"] == flag and c["images"] == c["n"] for c in cells)
    text = runner.invoke(app, ["compare", str(run_a), str(run_b), "--by", "dept"])
    assert "adj. p" in text.output and "p adjusted across each table (holm)" in text.output
    bad = runner.invoke(app, ["compare", str(run_a), str(run_b), "--adjust", "sidak"])
    assert bad.exit_code == 2 and "--adjust: unknown method 'sidak'" in bad.output


def test_a_run_against_itself(pair: tuple[Path, Path, list[tuple[float, float]]]) -> None:
    run_a, _, _ = pair
    overall = compare_runs(run_a, run_a).overall
    assert (overall.difference, overall.mcnemar_p) == (0.0, 1.0)
    assert overall.ci[0] < 0.0 < overall.ci[1] < 0.02  # Agresti–Min: narrow, never [0, 0]
    assert overall.ties == overall.n == 400


def test_shared_images_widen_the_paired_ci(tmp_path: Path) -> None:
    """Four questions per image, answered alike per image: resampling images, not items."""
    a_rows, b_rows = [], []
    for i in range(200):
        image, flip = i // 4, (i // 4) % 3 == 0
        meta = {"dept": "X", "level": "image", "image_id": str(image)}
        a_rows.append({"meta": meta, "score": 0.0})
        b_rows.append({"meta": meta, "score": 1.0 if flip else 0.0})
    clustered = compare_runs(
        write_run(tmp_path / "a", a_rows), write_run(tmp_path / "b", b_rows)
    ).overall
    for row in a_rows + b_rows:
        row["meta"] = {k: v for k, v in row["meta"].items() if k != "image_id"}
    plain = compare_runs(
        write_run(tmp_path / "c", a_rows), write_run(tmp_path / "d", b_rows)
    ).overall
    assert clustered.difference == plain.difference
    assert clustered.ci[1] - clustered.ci[0] > 1.5 * (plain.ci[1] - plain.ci[0])


def test_cli_text_without_by(pair: tuple[Path, Path, list[tuple[float, float]]]) -> None:
    run_a, run_b, _ = pair
    result = runner.invoke(app, ["compare", str(run_a), str(run_b)])
    assert result.exit_code == 0, result.output
    assert (
        f"A: {run_a}" in result.output and "W/T/L" in result.output and "by " not in result.output
    )
