"""One board from run directories: the JSON object every output format is laid out from."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from medlens.board.align import Aligned, BoardRun, align_runs, open_runs


@dataclass(frozen=True)
class BoardOptions:
    runs: list[Path]
    by: list[str] = field(default_factory=list)
    where: str = ""
    pairs: str = ""
    meta: Path | None = None
    reference: str | None = None
    across: bool = False
    base: str | None = None
    align: str = "same"
    min_n: int = 50
    n_resamples: int = 1000
    seed: int = 0


def load_references(name: str) -> list[dict[str, Any]]:
    """Published scores of other models (issue 16's provenance data), shown unranked."""
    from medlens.analysis.references import load_references as published

    rows = published(name)
    return [{"model": r["model"], "score": r["score"], "split": r.get("split"),
             "source": r.get("source"), "ranked": False} for r in rows]  # fmt: skip


def build_board(options: BoardOptions) -> dict[str, Any]:
    """Everything a board shows; refuses bad input before computing anything."""
    from medlens.core.errors import SpecError
    from medlens.core.limits import check_resamples

    if not options.runs:
        raise SpecError("board: give at least one run directory")
    check_resamples(options.n_resamples)
    if options.min_n < 1:
        raise SpecError(f"--min-n {options.min_n}: expected at least 1")
    runs = open_runs(options.runs)
    references = []
    if options.reference:
        from medlens.analysis.references import check_comparable

        for run in runs:
            check_comparable(options.reference, str(run.spec["benchmark"].get("name", "")), run.path)
        references = load_references(options.reference)
    if options.across:
        return _across_board(runs, options, references)
    aligned = align_runs(runs, options.align, options.where)
    return _board(aligned, options, references)


def _board(
    aligned: Aligned, options: BoardOptions, references: list[dict[str, Any]]
) -> dict[str, Any]:
    from medlens.board import axes as axes_module
    from medlens.board import pairs as pairs_module
    from medlens.board.difficulty import difficulty

    axes_module.check_board_axes(aligned, options.by)
    pairs = pairs_module.parse_pairs(options.pairs, [r.run for r in aligned.runs])
    meta = _read_meta(options.meta)
    models, tied, test = _models(aligned, options)
    by = axes_module.by_axis(aligned, options.by, options.min_n)
    pair_rows = pairs_module.pair_results(
        aligned, pairs, options.by, options.n_resamples, options.seed
    )
    board: dict[str, Any] = {
        "benchmark": aligned.runs[0].benchmark,
        "where": options.where,
        "align": {"mode": options.align, "n": int(aligned.ids.size), "dropped": aligned.dropped},
        "models": models,
        "chance": _chance(aligned),
        "tied": tied,
        "tied_test": test,
        "by": {a: {v: cells for v, cells in t.items()} for a, t in by.items()},
        "by_chance": axes_module.axis_chance(aligned, options.by),
        "pairs": pair_rows,
        "pair_tests": pairs_module.pair_tests(pair_rows, options.by),
        "correlations": {},
        "win_shares": {},
        "difficulty": difficulty(aligned),
        "references": references,
    }
    if meta is not None:
        _add_meta(board, aligned, meta, options)
    return board


def _read_meta(path: Path | None) -> Any:
    from medlens.board.meta import read_meta

    return None if path is None else read_meta(path)


def _models(
    aligned: Aligned, options: BoardOptions
) -> tuple[list[dict[str, Any]], list[list[str]], str]:
    from medlens.board import ranks

    cells = ranks.score_cells(aligned, options.min_n)
    scores = aligned.scores.mean(axis=1) if aligned.ids.size else np.zeros(len(aligned.runs))
    rank = ranks.ranks_of(scores)
    interval = ranks.rank_intervals(aligned, options.n_resamples, options.seed)
    raw, test = ranks.pairwise_p(aligned)
    adjusted = ranks.adjusted_pairs(raw)
    groups = ranks.tied_groups(scores, adjusted)
    models = []
    for r, run in enumerate(aligned.runs):
        models.append({
            "run": run.run, "name": run.name, **cells[r], "rank": int(rank[r]),
            "rank_ci": [int(interval[r, 0]), int(interval[r, 1])],
        })  # fmt: skip
    models.sort(key=lambda m: (m["rank"], m["run"]))
    names = [run.run for run in aligned.runs]
    return models, [[names[i] for i in group] for group in groups], f"{test}, Holm-adjusted, α 0.05"


def _chance(aligned: Aligned) -> dict[str, Any]:
    from medlens.analysis.score_table import baseline_mean

    n = int(aligned.ids.size)
    return {"n": n, "score": baseline_mean(aligned.random) if n else None}


def _add_meta(board: dict[str, Any], aligned: Aligned, meta: Any, options: BoardOptions) -> None:
    from medlens.board.groups import win_shares
    from medlens.board.meta import correlations, pair_correlations

    names = [run.run for run in aligned.runs]
    overall = [float(aligned.scores[r].mean()) for r in range(len(names))]
    per_axis = {
        axis: {value: cells for value, cells in table.items()}
        for axis, table in board["by"].items()
    }
    board["correlations"] = correlations(meta, names, overall, per_axis)
    board["win_shares"] = win_shares(aligned, meta, options.by, options.n_resamples, options.seed)
    board["pair_correlations"] = pair_correlations(meta, board["pairs"])
    board["meta_file"] = str(meta.path)


def _across_board(
    runs: list[BoardRun], options: BoardOptions, references: list[dict[str, Any]]
) -> dict[str, Any]:
    from medlens.board.across import across
    from medlens.core.errors import SpecError

    unused = [flag for flag, value in (("--by", options.by), ("--pairs", options.pairs),
                                        ("--meta", options.meta)) if value]  # fmt: skip
    if unused:
        raise SpecError(f"{unused[0]} does not apply to --across (one table: models × benchmarks)")
    matrix = across(runs, options.base, options.n_resamples, options.seed, options.where)
    return {
        "benchmark": None,
        "models": [],
        "tied": [],
        "by": {},
        "pairs": [],
        "pair_tests": None,
        "correlations": {},
        "references": references,
        "where": options.where,
        "across": matrix,
    }
