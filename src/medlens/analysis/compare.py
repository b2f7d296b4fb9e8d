"""Paired comparison of two runs on the same benchmark (base vs fine-tuned, prompt A vs B, probe).

Items are matched by id. Differences are B − A, with a paired 95% CI (``paired.paired_ci``:
Agresti–Min for 0/1 scores, t otherwise, cluster-robust when questions share an image), the
McNemar p-value (exact; an image-level sign-flip permutation test when items share images, so
that it stays calibrated), its mid-p, and per-item win/tie/loss counts from B's point of view.
Every cell of a ``--by`` table also carries ``p_adjusted`` (Holm across that table by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.analysis.groupable import check_by_axes
from medlens.analysis.slice_cells import key_label
from medlens.core.errors import RunMismatchError, SpecError
from medlens.stats.cells import TOO_FEW_IMAGES, one_image_note, too_few_to_compare
from medlens.stats.intervals import chance_corrected

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource

ADJUSTMENTS = ("holm", "bh", "none")
"""``--adjust`` names (``medlens.stats.multiplicity``)."""

PROBE_AXES = ("granularity", "modality", "department", "task")
"""Axes shown by default when one run is a probe (e.g. blank image) of the other."""


@dataclass(frozen=True)
class PairedCell:
    """The comparison restricted to one slice (or overall, with an empty key)."""

    key: tuple[tuple[str, str], ...]
    n: int
    """Items scored in both runs."""
    score_a: float
    score_b: float
    difference: float
    """score_b − score_a."""
    ci: tuple[float, float]
    wins: int
    """Items where B scores higher than A."""
    ties: int
    losses: int
    mcnemar_p: float | None
    """Exact McNemar test, image-level when items share images; None unless both are 0/1."""
    random: float | None
    images: int = 0
    """Images (clusters) among the items."""
    p: float | None = None
    """Two-sided p of B − A = 0: `mcnemar_p` for 0/1 scores, else the Monte-Carlo sign-flip p."""
    mid_p: float | None = None
    p_adjusted: float | None = None
    """`p` adjusted across the cells of its ``--by`` table (`adjust`); overall: `p`."""
    adjust: str = "none"
    too_few_images: bool = False
    """The items span 2 images, or images so unbalanced that fewer than 3 count
    (``cells.too_few_to_compare``): the row says so instead of printing its useless interval."""

    @property
    def label(self) -> str:
        return key_label(self.key)

    def to_json(self) -> dict[str, Any]:
        return {
            "key": dict(self.key),
            "n": self.n,
            "score_a": self.score_a,
            "score_b": self.score_b,
            "difference": self.difference,
            "ci": None if self.too_few_images else list(self.ci),
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "mcnemar_p": self.mcnemar_p,
            "mid_p": self.mid_p,
            "p": self.p,
            "p_adjusted": self.p_adjusted,
            "adjust": self.adjust,
            "random": self.random,
            "images": self.images,
            "chance_corrected_a": chance_corrected(self.score_a, self.random),
            "chance_corrected_b": chance_corrected(self.score_b, self.random),
            "note": TOO_FEW_IMAGES if self.too_few_images else one_image_note(self.images),
        }


@dataclass(frozen=True)
class Comparison:
    run_a: str
    run_b: str
    probe_a: str | None
    probe_b: str | None
    only_a: int
    """Items scored in A but not in B (left out of every figure)."""
    only_b: int
    overall: PairedCell
    by: dict[str, list[PairedCell]]
    settings: str = ""
    """How the runs' prompt / extraction / seed / parameters differ ("" when only model and
    probe do): such a difference is part of B − A."""
    score_source: str = "rules"
    coverage: tuple[dict[str, Any] | None, dict[str, Any] | None] = (None, None)
    """Each run's judged coverage (``score_source.coverage_of``) under a judged source."""

    def to_json(self) -> dict[str, Any]:
        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "score_source": self.score_source,
            "coverage_a": self.coverage[0],
            "coverage_b": self.coverage[1],
            "settings_differ": self.settings,
            "probe_a": self.probe_a,
            "probe_b": self.probe_b,
            "only_a": self.only_a,
            "only_b": self.only_b,
            "overall": self.overall.to_json(),
            "by": {axis: [c.to_json() for c in cells] for axis, cells in self.by.items()},
        }


@dataclass(frozen=True)
class _Paired:
    """Both runs' scores on the shared scored items, with run A's metadata."""

    a: np.ndarray
    b: np.ndarray
    random: np.ndarray
    cluster: np.ndarray
    meta: dict[str, np.ndarray]


def compare_runs(
    run_a: Path,
    run_b: Path,
    by: Sequence[str] = (),
    n_resamples: int = 1000,
    seed: int = 0,
    adjust: str = "holm",
    source: ScoreSource | None = None,
) -> Comparison:
    """Compare two run directories; refuses runs made on different benchmarks.

    `adjust` (``holm``, ``bh`` or ``none``) sets how `p_adjusted` corrects each ``--by`` table;
    `source` (``--score``) which per-item scores are paired (judged ones: both runs need the
    judge, and only items with a verdict in both runs are paired).
    """
    if adjust not in ADJUSTMENTS:
        raise SpecError(f"--adjust: unknown method {adjust!r} (use holm, bh or none)")
    from medlens.analysis.artifacts import sourced_score_table
    from medlens.analysis.score_source import RULES
    from medlens.runs.view import RunView

    source = source or RULES
    store_a, store_b = RunView(run_a), RunView(run_b)  # run.json only: the scores come
    # from the score tables
    check_same_benchmark(run_a, store_a.run, run_b, store_b.run)
    table_a, coverage_a = sourced_score_table(store_a.path, source)
    table_b, coverage_b = sourced_score_table(store_b.path, source)
    ids_a = {i: n for n, i in enumerate(table_a.ids) if not np.isnan(table_a.score[n])}
    ids_b = {i: n for n, i in enumerate(table_b.ids) if not np.isnan(table_b.score[n])}
    shared = [i for i in table_a.ids if i in ids_a and i in ids_b]
    rows_a = np.array([ids_a[i] for i in shared], dtype=np.intp)
    rows_b = np.array([ids_b[i] for i in shared], dtype=np.intp)
    paired = _Paired(
        a=table_a.score[rows_a],
        b=table_b.score[rows_b],
        random=table_a.random[rows_a],
        cluster=table_a.cluster[rows_a],
        meta={k: v[rows_a] for k, v in table_a.meta.items()},
    )
    probes = store_a.run["spec"].get("probe"), store_b.run["spec"].get("probe")
    axes = list(by) or ([a for a in PROBE_AXES if a in paired.meta] if any(probes) else [])
    check_by_axes(axes, paired.meta)
    everything = np.ones(len(shared), dtype=bool)
    return Comparison(
        run_a=str(run_a),
        run_b=str(run_b),
        probe_a=probes[0],
        probe_b=probes[1],
        only_a=len(ids_a) - len(shared),
        only_b=len(ids_b) - len(shared),
        overall=paired_cell(paired, everything, (), n_resamples, seed),
        by={axis: by_axis(paired, axis, n_resamples, seed, adjust) for axis in axes},
        settings=_setting_differences(store_a.run["spec"], store_b.run["spec"]),
        score_source=source.label,
        coverage=(coverage_a, coverage_b),
    )


def _setting_differences(spec_a: dict[str, Any], spec_b: dict[str, Any]) -> str:
    from medlens.runs.store import describe_difference

    compared = ("prompt", "extract", "seed", "params", "strategy", "selection")
    return describe_difference(
        {k: spec_a.get(k) for k in compared}, {k: spec_b.get(k) for k in compared}
    )


def check_same_benchmark(
    path_a: Path, run_a: dict[str, Any], path_b: Path, run_b: dict[str, Any]
) -> None:
    """Refuse to pair items of two different benchmarks (content hash of the items)."""
    bench_a, bench_b = run_a["spec"]["benchmark"], run_b["spec"]["benchmark"]
    if bench_a.get("content_hash") != bench_b.get("content_hash"):
        from medlens.core.fingerprint import older_hash_note

        raise RunMismatchError(
            f"cannot compare: {path_a} ran on {bench_a.get('spec')} ({bench_a.get('n_items')} items, "
            f"content {str(bench_a.get('content_hash'))[:12]}) but {path_b} ran on "
            f"{bench_b.get('spec')} ({bench_b.get('n_items')} items, content "
            f"{str(bench_b.get('content_hash'))[:12]}); paired comparison needs the same items"
            f"{older_hash_note(bench_a, bench_b)}"
        )


def by_axis(
    paired: _Paired, axis: str, n_resamples: int = 1000, seed: int = 0, adjust: str = "holm"
) -> list[PairedCell]:
    """One cell per value of `axis`, with `p_adjusted` across them."""
    values = paired.meta[axis]
    cells = [
        paired_cell(paired, values == value, ((axis, str(value)),), n_resamples, seed)
        for value in sorted(set(values.tolist()) - {""})
    ]
    return adjust_cells(cells, adjust)


def adjust_cells(cells: list[PairedCell], adjust: str) -> list[PairedCell]:
    """`cells` with `p_adjusted` (``multiplicity.adjust``) over the cells that have a p."""
    from dataclasses import replace

    from medlens.stats.multiplicity import adjust as adjust_p

    tested = [i for i, c in enumerate(cells) if c.p is not None]
    adjusted = adjust_p([float(cells[i].p or 0.0) for i in tested], adjust).tolist()
    out = [replace(c, adjust=adjust) for c in cells]
    for i, value in zip(tested, adjusted, strict=True):
        out[i] = replace(out[i], p_adjusted=float(value))
    return out


def paired_cell(
    paired: _Paired, mask: np.ndarray, key: tuple[tuple[str, str], ...], n_resamples: int, seed: int
) -> PairedCell:
    """All paired statistics of the items selected by `mask`."""
    from medlens.analysis.score_table import baseline_mean
    from medlens.stats.paired import paired_ci, sign_flip_test

    a, b = paired.a[mask], paired.b[mask]
    n = int(mask.sum())
    if n == 0:
        nan = float("nan")
        return PairedCell(key, 0, nan, nan, nan, (nan, nan), 0, 0, 0, None, None)
    clusters = paired.cluster[mask]
    counts = np.unique(clusters.astype(str), return_counts=True)[1]
    images = int(counts.size)
    lo, hi = paired_ci(a, b, clusters)
    p, mid_p = sign_flip_test(a, b, clusters, seed=seed)
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    baseline = paired.random[mask]  # open items count as 0 chance, as in results.json
    return PairedCell(
        key=key,
        n=n,
        score_a=float(a.mean()),
        score_b=float(b.mean()),
        difference=float(b.mean() - a.mean()),
        ci=(lo, hi),
        wins=int((b > a).sum()),
        ties=int((b == a).sum()),
        losses=int((b < a).sum()),
        mcnemar_p=p if binary else None,
        random=baseline_mean(baseline),
        images=images,
        p=p,
        mid_p=mid_p,
        p_adjusted=p,
        too_few_images=too_few_to_compare(images, float(n * n / (counts**2).sum())),
    )


def mcnemar_exact(a: np.ndarray, b: np.ndarray) -> float | None:
    """Two-sided exact McNemar p-value (binomial test on discordant pairs); None if not 0/1."""
    from scipy.stats import binomtest

    if not (np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all()):
        return None
    b_only = int(((b == 1) & (a == 0)).sum())
    a_only = int(((a == 1) & (b == 0)).sum())
    if a_only + b_only == 0:
        return 1.0
    return float(binomtest(b_only, a_only + b_only, 0.5).pvalue)
