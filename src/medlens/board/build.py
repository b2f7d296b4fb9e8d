"""One board from run directories: the JSON object every output format is laid out from."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.board.align import Aligned, BoardRun, align_runs, open_runs

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource
    from medlens.board.published import Published


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
    layout: str | None = None
    """``medcmr``, ``mmbu`` or ``gmai``: the paper's main table (``board.layouts``)."""
    judge: str | None = None
    """The judge whose verdicts score a layout's judged columns (``--judge NAME``)."""
    score: ScoreSource | None = None
    """``--score``, parsed (rules when None; ``combined:JUDGE`` with a layout's --judge)."""
    allow_partial: bool = False
    labels: dict[str, str] = field(default_factory=dict)
    """Run directory (as given) → its model label (a study's): the name the board shows and
    --pairs, --meta and --base use instead of the folder name; with --across, the model row."""


def build_board(options: BoardOptions) -> dict[str, Any]:
    """Everything a board shows; refuses bad input before computing anything."""
    from medlens.core.errors import SpecError
    from medlens.core.limits import check_resamples

    if not options.runs:
        raise SpecError("board: give at least one run directory")
    check_resamples(options.n_resamples)
    if options.min_n < 1:
        raise SpecError(f"--min-n {options.min_n}: expected at least 1")
    if options.layout is not None:
        from medlens.analysis.paper_columns import layout_columns

        layout_columns(options.layout)  # an unknown layout fails before any run is read
    source = board_source(options)
    runs = open_runs(options.runs, options.labels, label_runs=not options.across)
    if options.across:
        return _across_board(runs, options)
    from medlens.board.estimated import estimated_rows, split_estimated

    runs, designed = split_estimated(runs)
    aligned = align_runs(runs, options.align, options.where, source)
    if options.layout is not None:
        from medlens.board.layouts import check_layout

        check_layout(options.layout, aligned)
    from medlens.board.published import board_published

    published = board_published(
        aligned, options.reference, options.layout, options.where, options.allow_partial
    )
    board = _board(aligned, options, published)
    from medlens.analysis.artifacts import imageless

    if aligned.runs and all(imageless(run.path) for run in aligned.runs):
        board["imageless"] = True  # a text benchmark: tables show "–" for images
    if designed:
        board["estimated"] = estimated_rows(designed)
    return board


def board_source(options: BoardOptions) -> ScoreSource:
    """The board's score source: --score, or ``combined:JUDGE`` for a layout with --judge (the
    closed columns by rules, the judged columns by the judge)."""
    from medlens.analysis.score_source import RULES, ScoreSource
    from medlens.core.errors import SpecError

    score = options.score or RULES
    if options.judge is not None and options.layout is None:
        raise SpecError(
            "--judge goes with --layout; without one use --score judge:NAME or combined:NAME"
        )
    if options.layout is not None and score.kind == "judge":
        raise SpecError(f"--layout {options.layout} reads its closed columns by rules: use "
                        f"--score combined:{score.judge} (or --judge {score.judge})")  # fmt: skip
    if options.judge is None:
        return score
    if score.judged and score.judge != options.judge:
        raise SpecError(f"--judge {options.judge} and --score {score.label} name different judges")
    return ScoreSource("combined", options.judge)


def _board(aligned: Aligned, options: BoardOptions, published: Published) -> dict[str, Any]:
    """The board JSON. Over 60 lines: one entry per section of the board, in reading order."""
    from medlens.board import axes as axes_module
    from medlens.board import pairs as pairs_module
    from medlens.board.difficulty import difficulty
    from medlens.board.published import reference_table_json
    from medlens.checks.vocabulary import expand_levels

    # tree:LEVEL → its parent levels first, one per-axis table each (as slice and report)
    options = replace(options, by=expand_levels(options.by, list(aligned.meta)))
    axes_module.check_board_axes(aligned, options.by)
    pairs = pairs_module.parse_pairs(options.pairs, [r.run for r in aligned.runs])
    meta = _read_meta(options.meta)
    models, tied, test = _models(aligned, options)
    for model in models:
        if model["run"] in published.labels:
            model["not_comparable"] = published.labels[model["run"]]
    by = axes_module.by_axis(aligned, options.by, options.min_n)
    # Med-CMR's pairs are tested per answer form (its layout's pairs); an overall pair cell
    # there would pool MCQ accuracy with judged open scores, which the layout never does.
    board_pairs = [] if options.layout == "medcmr" else pairs
    pair_rows = pairs_module.pair_results(
        aligned, board_pairs, options.by, options.n_resamples, options.seed
    )
    board: dict[str, Any] = {
        "benchmark": aligned.runs[0].benchmark,
        "score_source": aligned.source,
        "coverage": aligned.judged.coverage if aligned.judged is not None else {},
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
        "pair_tests_by": pairs_module.pair_tests_by_axis(pair_rows, options.by) if board_pairs else {},
        "correlations": {},
        "win_shares": {},
        "difficulty": difficulty(aligned),
        "references": published.models,
        "reference": None if published.table is None else {
            "name": published.table.name, "citation": published.table.citation},
        "not_comparable": published.labels,
    }  # fmt: skip
    if published.table is not None and options.layout is None and not published.models:
        board["reference_table"] = reference_table_json(published.table)
    flagged = near_ceiling_sources(aligned, by, options.min_n)
    if flagged:  # only when a source is at the ceiling, so ordinary boards keep their shape
        board["near_ceiling"] = flagged
    if meta is not None:
        _add_meta(board, aligned, meta, options)
    if options.layout is not None:
        board["layout"] = _layout(aligned, options, published, pairs, meta)
    return board


def _layout(
    aligned: Aligned, options: BoardOptions, published: Published, pairs: list[tuple[str, str]],
    meta: Any,
) -> dict[str, Any]:  # fmt: skip
    from medlens.board.layouts import LayoutContext, build_layout

    judge = None
    if aligned.source.startswith("combined:"):
        judge = aligned.source.partition(":")[2]
    context = LayoutContext(judge, published.table, published.labels, pairs, meta,
                            options.n_resamples, options.seed)  # fmt: skip
    assert options.layout is not None
    return build_layout(options.layout, aligned, context, options.min_n)


def near_ceiling_sources(
    aligned: Aligned, by: dict[str, dict[str, list[dict[str, Any]]]], min_n: int
) -> list[str]:
    """Each run's sources scored ≥ 98% with n ≥ 50 (``checks.contamination``), as notes."""
    from medlens.board import axes as axes_module
    from medlens.checks.contamination import near_ceiling, reads_gold

    if "source" not in aligned.meta:
        return []
    table = by.get("source") or axes_module.by_axis(aligned, ["source"], min_n)["source"]
    notes = []
    for index, run in enumerate(aligned.runs):
        if reads_gold(str(run.spec.get("model", ""))):
            continue
        cells = {value: cells[index] for value, cells in table.items()}
        notes += [f"{run.run}: {note}" for note in near_ceiling(cells)]
    return notes


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
            "run": run.run, "name": run.name, "label": run.label or run.run, **cells[r],
            "rank": int(rank[r]),
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


def _across_board(runs: list[BoardRun], options: BoardOptions) -> dict[str, Any]:
    from medlens.board.across import across
    from medlens.core.errors import SpecError

    unused = [flag for flag, value in (("--by", options.by), ("--pairs", options.pairs),
                                        ("--meta", options.meta), ("--layout", options.layout),
                                        ("--reference", options.reference),
                                        ("--score", options.score and options.score.judged))
              if value]  # fmt: skip
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
        "references": [],
        "where": options.where,
        "across": matrix,
    }
