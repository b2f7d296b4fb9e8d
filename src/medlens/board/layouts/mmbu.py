"""MMBU's main table: for the four perception tasks, micro-F1 of the closed and the open form
and Δ = closed − open paired on the same samples (CI resampling whole images), as
``scoring.mmbu`` computes them for one run's results; open classification from the named
equivalence judge (rules otherwise, and the title says so), open detection by IoU. Below: a
chance row (medlens's expectation of uniform guessing) beside the paper's Random row, and all
published rows. Pairs (``--pairs BASE:ADAPTED``): MMBU's base vs adapted table — closed
unanchored F1 of both, the change with a paired CI, per-item win / tie / loss shares — beside
the published pairs, and with ``--meta`` the win rate regressed on each numeric column (the
paper: y = 0.20x + 9.74 on training-data size, R² 0.41).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from medlens.analysis.paper_columns import MMBU_TASKS, PaperColumn, mmbu_columns
from medlens.board.align import Aligned
from medlens.board.layouts.common import (
    LayoutContext,
    chance_cells,
    chance_row,
    column_mask,
    layout_object,
    published_rows,
    run_rows,
)

PAIR_COLUMN = PaperColumn(
    "unanchored_closed", (("task", "classification"), ("answer_type", "closed")), "micro_f1"
)


def mmbu_layout(aligned: Aligned, context: LayoutContext) -> dict[str, Any]:
    columns = mmbu_columns()
    cells = _run_cells(aligned, context)
    rows = run_rows(aligned, cells, context.labels)
    closed = [c for c in columns if c.metric != "delta"]
    rows += [
        chance_row(chance_cells(aligned, closed)),
        *published_rows(context, [c.name for c in columns]),
    ]
    opened = f"the equivalence judge {context.judge}" if context.judge else "rules (no --judge)"
    title = (
        f"MMBU main table: micro-F1 closed / open (open classification by {opened}) and paired Δ"
    )
    pairs = mmbu_pairs(aligned, context) if context.pairs else None
    gap = layout_gap(aligned, cells, context)
    return layout_object(
        "mmbu", aligned, columns, rows, title, judge=context.judge, pairs=pairs, gap=gap
    )


def layout_gap(
    aligned: Aligned, cells: list[dict[str, dict[str, Any]]], context: LayoutContext
) -> dict[str, Any]:
    """MMBU's headline gap (``analysis.task_mean``) of each run, from its paired Δ cells, and of
    the published rows."""
    from medlens.analysis.task_mean import mmbu_gap, published_gap

    runs = {}
    for run, mine in zip(aligned.runs, cells, strict=True):
        by_task = {task: {"delta": mine[f"{prefix}_delta"]["value"],
                          "delta_ci": mine[f"{prefix}_delta"]["ci"]}
                   for prefix, task in MMBU_TASKS.items() if f"{prefix}_delta" in mine}  # fmt: skip
        found = mmbu_gap({"by": {"task": by_task}})
        if found is not None and found["headline"] is not None:
            runs[run.run] = found
    published = published_gap(context.reference) if context.reference is not None else None
    return {"runs": runs, "published": published}


def _run_cells(aligned: Aligned, context: LayoutContext) -> list[dict[str, dict[str, Any]]]:
    """Per run, its cells from its own (sourced) records over the aligned items."""
    from medlens.analysis.score_source import RULES, ScoreSource, sourced_run
    from medlens.runs.view import RunView

    ids = set(aligned.ids.tolist())
    source = ScoreSource("combined", context.judge) if context.judge else RULES
    items = [i for i in RunView(aligned.runs[0].path).items() if i.id in ids]
    out = []
    for run in aligned.runs:
        sourced = sourced_run(run.path, items, RunView(run.path).records(), source)
        out.append(task_cells(aligned, run.run, sourced.items, sourced.records))
    return out


def task_cells(
    aligned: Aligned, run: str, items: list[Any], records: dict[str, Any]
) -> dict[str, dict[str, Any]]:
    from medlens.scoring.mmbu import paired_delta, task_cell

    scored = [
        (i, records[i.id])
        for i in items
        if i.id in records and records[i.id].get("score") is not None
    ]
    cells: dict[str, dict[str, Any]] = {}
    for prefix, task in MMBU_TASKS.items():
        mine = [(i, r) for i, r in scored if i.meta.get("task") == task]
        for form in ("closed", "open"):
            chosen = [(i, r) for i, r in mine if i.meta.get("answer_type") == form]
            if not chosen:
                continue
            cell = task_cell(chosen)
            out = {"value": cell["value"], "ci": cell["ci"], "n": cell["n"]}
            if form == "open" and task != "detection" and aligned.judged is not None:
                column = PaperColumn(
                    f"{prefix}_open", (("task", task), ("answer_type", "open")), "micro_f1"
                )
                meta = aligned.judged.meta
                out["coverage"] = aligned.judged.cell(
                    run, column_mask(meta, column, len(meta["kind"]))
                )
            cells[f"{prefix}_{form}"] = out
        delta = paired_delta(mine)
        if delta is not None:
            cells[f"{prefix}_delta"] = {
                "value": delta["delta"],
                "ci": delta["delta_ci"],
                "n": delta["n_pairs"],
            }
    return cells


def mmbu_pairs(aligned: Aligned, context: LayoutContext) -> dict[str, Any]:
    """Base vs adapted on the closed unanchored items: both F1s, the change with a paired CI
    (``compare.paired_cell``), win / tie / loss shares; the published pairs beside them."""
    from medlens.analysis.compare import paired_cell
    from medlens.analysis.reference_tables import load_pair_table
    from medlens.board.pairs import _paired

    index = {run.run: r for r, run in enumerate(aligned.runs)}
    mask = column_mask(aligned.meta, PAIR_COLUMN, aligned.ids.size)
    rows = []
    for base, tuned in context.pairs:
        paired = _paired(aligned, index[base], index[tuned])
        if not mask.any():
            rows.append({"base": base, "tuned": tuned, "n": 0})
            continue
        cell = paired_cell(paired, mask, (), context.n_resamples, context.seed)
        n = cell.n
        rows.append({
            "base": base, "tuned": tuned, "n": n, "base_f1": cell.score_a, "tuned_f1": cell.score_b,
            "change": cell.difference, "ci": list(cell.ci), "wins": cell.wins, "ties": cell.ties,
            "losses": cell.losses, "win_share": cell.wins / n, "tie_share": cell.ties / n,
            "loss_share": cell.losses / n, "p": cell.p,
        })  # fmt: skip
    published = [asdict(p) for p in load_pair_table()]
    return {"rows": rows, "published": published, "win_rate_fit": _win_rate_fit(rows, context)}


def _win_rate_fit(rows: list[dict[str, Any]], context: LayoutContext) -> dict[str, Any]:
    """Win rate (% of items the adapted model wins) against each numeric --meta column of the
    adapted run: slope, intercept, R² (``board.meta.correlation``)."""
    from medlens.board.meta import correlation

    if context.meta is None:
        return {}
    out = {}
    for name, by_run in context.meta.numeric.items():
        kept = [r for r in rows if r.get("n") and r["tuned"] in by_run]
        x = np.array([by_run[r["tuned"]] for r in kept], dtype=float)
        y = np.array([100 * r["win_share"] for r in kept], dtype=float)
        out[name] = correlation(x, y)
    return out
