"""Across benchmarks (`--across`): the model × benchmark matrix, gains against a base model.

One run per model and benchmark; a model is the model spec its runs recorded. Each cell is the
run's score with the CI every report prints; with a base model, each cell also carries the
paired difference to the base model's run on the same benchmark (on the items both scored),
with the paired CI and win/tie/loss of `medlens compare` — MMBU's old- vs new-benchmark
transfer table.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlens.board.align import BoardRun, align_runs
from medlens.board.estimated import designed_source, estimated_rows, split_estimated
from medlens.board.ranks import score_cells
from medlens.core.errors import SpecError


def benchmark_label(run: BoardRun, runs: Sequence[BoardRun]) -> str:
    """The benchmark's name, with its content hash when two benchmarks share a name."""
    bench = run.benchmark
    name = str(bench.get("name") or bench.get("spec"))
    hashes = {str(r.benchmark.get("content_hash")) for r in runs if r.benchmark.get("name") == name}
    return name if len(hashes) <= 1 else f"{name} ({str(bench.get('content_hash'))[:8]})"


def across(
    runs: Sequence[BoardRun],
    base: str | None,
    n_resamples: int = 1000,
    seed: int = 0,
    where: str = "",
) -> dict[str, Any]:
    """{"benchmarks", "models", "base", "cells": [{model, benchmark, run, n, score, ci, gain}]}"""
    ranked, estimated = split_estimated(runs)
    sources = {str(run.benchmark.get("content_hash")): run for run in ranked}
    run_of: dict[tuple[str, str], BoardRun] = {}
    for run in runs:
        source = sources.get(str(designed_source(run))) if run in estimated else None
        key = (run.name, benchmark_label(source or run, ranked))
        if key in run_of:
            raise SpecError(
                f"--across: {run_of[key].path} and {run.path} are both {key[0]} on {key[1]}; "
                "give one run per model and benchmark"
            )
        run_of[key] = run
    models = list(dict.fromkeys(name for name, _ in run_of))
    benchmarks = list(dict.fromkeys(bench for _, bench in run_of))
    base_model = _base_model(base, runs, models)
    cells = []
    for (model, bench), run in run_of.items():
        if run in estimated:
            cells.append(estimated_cell(run, model, bench))
            continue
        cell = {"model": model, "benchmark": bench, "run": run.run,
                **score_cells(align_runs([run], "same", where))[0], "gain": None}  # fmt: skip
        base_run = run_of.get((base_model, bench)) if base_model else None
        if base_run is not None and base_run is not run and base_run not in estimated:
            cell["gain"] = _gain(base_run, run, n_resamples, seed, where)
        cells.append(cell)
    matrix = {"benchmarks": benchmarks, "models": models, "base": base_model, "cells": cells}
    gaps = split_gaps({k: r for k, r in run_of.items() if r not in estimated}, cells)
    if gaps:  # one model on two splits of one benchmark: the VAL/TEST gap
        matrix["split_gaps"] = gaps
    return matrix


def estimated_cell(run: BoardRun, model: str, bench: str) -> dict[str, Any]:
    """A run on a designed subset of a benchmark in the matrix: its full-benchmark estimate and
    interval in the benchmark's column, ``estimated`` "estimated from N items" (no gain: it
    shares no item set with the base model's run)."""
    row = estimated_rows([run])[0]
    return {"model": model, "benchmark": bench, "run": run.run, "n": row["n"],
            "score": row["estimate"], "ci": row["ci"], "small": False, "gain": None,
            "estimated": row["label"]}  # fmt: skip


def split_gaps(
    run_of: dict[tuple[str, str], BoardRun], cells: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Per model, every pair of its runs on two splits of one benchmark: the unpaired gap
    (``analysis.split_gap``), with the call-out beyond 2 points."""
    from medlens.analysis.split_gap import gap_alert, unpaired_gap

    cell_of = {(c["model"], c["benchmark"]): c for c in cells}
    out = []
    keys = list(run_of)
    for i, (model, bench_a) in enumerate(keys):
        for model_b, bench_b in keys[i + 1 :]:
            a, b = run_of[(model, bench_a)].benchmark, run_of[(model_b, bench_b)].benchmark
            if (
                model_b != model
                or a.get("name") != b.get("name")
                or a.get("split") == b.get("split")
            ):
                continue
            found = unpaired_gap(cell_of[(model, bench_a)], cell_of[(model, bench_b)])
            if found is None:
                continue
            splits = [str(a.get("split")), str(b.get("split"))]
            out.append({"model": model, "splits": splits, "gap": found[0], "ci": found[1],
                        "alert": gap_alert(splits, found[0])})  # fmt: skip
    return out


def _base_model(base: str | None, runs: Sequence[BoardRun], models: list[str]) -> str | None:
    if base is None:
        return None
    if base in models:
        return base
    for run in runs:
        if run.run == base:
            return run.name
    raise SpecError(
        f"--base: {base!r} is neither a model nor a run on the board (models: {', '.join(models)})"
    )


def _gain(
    base: BoardRun, run: BoardRun, n_resamples: int, seed: int, where: str
) -> dict[str, Any] | None:
    import numpy as np

    from medlens.analysis.compare import paired_cell
    from medlens.board.pairs import _paired

    aligned = align_runs([base, run], "intersect", where)
    if aligned.ids.size == 0:
        return None
    everything = np.ones(aligned.ids.size, dtype=bool)
    cell = paired_cell(_paired(aligned, 0, 1), everything, (), n_resamples, seed).to_json()
    del cell["key"]
    return cell
