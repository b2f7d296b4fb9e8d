"""Published rows beside the board's runs: which table (``--reference NAME|FILE.csv``, or the
layout's own), which of its rows (those of the board's split), and which runs are comparable.

A run that is not like for like with the table (``analysis.comparability``, row by row: the
rows shown are those of the runs' own item set) is
refused — with ``--reference`` and with a layout's own table alike — unless ``--allow-partial``,
which keeps it, labelled ``not comparable: <reason>`` in every format. A run on the published items read
otherwise than the published rows (GMAI-MMBench: VLMEvalKit's prompt and extraction) is labelled
``comparable item set, different reading protocol: …``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from medlens.board.align import Aligned


@dataclass(frozen=True)
class Published:
    table: Any
    """``analysis.reference_tables.ReferenceTable`` (None: no published rows)."""
    models: list[dict[str, Any]] = field(default_factory=list)
    """Rows for the models table and the forest plot (a table with an ``overall`` column)."""
    labels: dict[str, str] = field(default_factory=dict)
    """Run → ``not comparable: <reason>``."""


def layout_reference(layout: str | None, split: str) -> str | None:
    """The published table a layout shows by default."""
    if layout == "gmai":
        return f"gmai-{split}" if split in ("val", "test") else None
    return layout


def board_published(
    aligned: Aligned,
    reference: str | None,
    layout: str | None,
    where: str,
    allow_partial: bool,
) -> Published:
    from medlens.analysis.reference_tables import load_reference

    split = str(aligned.runs[0].benchmark.get("split", ""))
    name = reference or layout_reference(layout, split)
    if name is None:
        return Published(None)
    table = load_reference(name)
    if layout is not None:
        _check_columns(table, layout)
    rows = [row for row in table.rows if row.split == split] or list(table.rows)
    shown, labels = _comparable(aligned, table, rows, where, allow_partial)
    models = []
    if layout is None and "overall" in table.columns:
        models = [{"model": r.model, "score": r.values["overall"], "split": r.split,
                   "source": table.source_of(r), "ranked": False}
                  for r in shown if r.values.get("overall") is not None]  # fmt: skip
    return Published(_with_rows(table, shown), models, labels)


def _comparable(
    aligned: Aligned, table: Any, rows: list[Any], where: str, allow_partial: bool
) -> tuple[list[Any], dict[str, str]]:
    """The rows to show (those every comparable run is like for like with: one item set of the
    table, ``analysis.comparability.comparable_rows``) and each other run's label; a run
    comparable with none of them is refused unless `allow_partial`."""
    from medlens.analysis.comparability import (
        DIFFERENT_PROTOCOL,
        comparable_rows,
        label,
        protocol_differences,
        refusal,
    )

    axes = {*aligned.meta, "kind"}
    verdicts = {run.run: comparable_rows(table, rows, run.spec, aligned.scored.get(run.run, 0),
                                         axes, where) for run in aligned.runs}  # fmt: skip
    comparable = [v.rows for v in verdicts.values() if not v.reasons]
    first = comparable[0] if comparable else next(iter(verdicts.values())).rows
    shown = [row for row in first if all(row in kept for kept in comparable)] or first
    labels = {}
    for run in aligned.runs:
        verdict = verdicts[run.run]
        reasons = verdict.reasons or (
            [] if all(row in verdict.rows for row in shown)
            else ["the published rows shown are of another item set"]
        )  # fmt: skip
        if reasons and not allow_partial:
            raise refusal(run.path, table, reasons)
        differences = protocol_differences(table, run.spec, *_judging(aligned, run, table))
        if reasons:
            labels[run.run] = label(reasons) or ""
        elif differences:  # the items match, the reading does not
            labels[run.run] = f"{DIFFERENT_PROTOCOL}: " + "; ".join(differences)
    return shown, labels


def _judging(aligned: Aligned, run: Any, table: Any) -> tuple[dict[str, Any] | None, bool]:
    """The judge.json of the judge whose verdicts the board shows for `run` (None: the rules),
    and whether the table has columns the paper's judge scored."""
    from medlens.analysis.paper_columns import layout_columns
    from medlens.analysis.score_source import parse_score_source
    from medlens.runs.view import RunView

    source = parse_score_source(aligned.source)
    judge = RunView(run.path).judge(source.judge) if source.judge else None
    judged = table.layout is not None and any(c.judged for c in layout_columns(table.layout))
    return judge, judged


def _with_rows(table: Any, rows: list[Any]) -> Any:
    from dataclasses import replace

    return replace(table, rows=tuple(rows))


def _check_columns(table: Any, layout: str) -> None:
    """A user's table beside a layout must hold that layout's columns only."""
    from medlens.analysis.paper_columns import layout_columns
    from medlens.core.errors import InputError

    known = {c.name for c in layout_columns(layout)}
    unknown = [c for c in table.columns if c not in known]
    if unknown:
        raise InputError(
            table.name, "line 1",
            f"column {unknown[0]!r} is not a column of --layout {layout} "
            f"(its columns: {', '.join(c.name for c in layout_columns(layout))})",
        )  # fmt: skip


def reference_table_json(table: Any) -> dict[str, Any] | None:
    """A published table with columns other than ``overall``, shown on its own (no layout)."""
    from medlens.analysis.reference_tables import published_cells

    if table is None:
        return None
    return {"name": table.name, "citation": table.citation, "columns": list(table.columns),
            "rows": published_cells(table, table.columns)}  # fmt: skip
