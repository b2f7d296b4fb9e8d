"""`report --format xlsx`: the report's tables as sheets, written through
:mod:`medlens.core.spreadsheet` (text stays text, never a formula)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.spreadsheet import (
    PERCENT_FORMAT,
    percent_columns,
    sheet_name,
    workbook_bytes,
    write_rows,
)
from medlens.report.sections import ReportData, build_report, closed_open_cells

if TYPE_CHECKING:
    from openpyxl import Workbook

    from medlens.analysis.score_source import ScoreSource


def render(run_dir: Path, score: ScoreSource | None = None) -> bytes:
    """The report workbook: protocol, overall, one sheet per axis, worst cells, items."""
    from openpyxl import Workbook

    from medlens.report.card import protocol_card, sheet_rows, with_run_rows

    data = build_report(Path(run_dir), score)
    workbook = Workbook()
    protocol = workbook.active
    assert protocol is not None
    protocol.title = "protocol"  # the one protocol table: the card with the run's own rows
    card = with_run_rows(protocol_card(Path(run_dir)), data.protocol)
    write_rows(protocol, [("field", "value"), *sheet_rows(card)])
    if data.has_answers:
        _score_sheets(workbook, data)
    else:
        write_rows(
            protocol,
            [
                (),
                (
                    "scores",
                    "this split has no gold answers: scores need the "
                    f"official answer key; {data.export_lead.lower()}: {data.export_hint}",
                ),
            ],
        )
    deficiency = workbook.create_sheet("deficiency")
    write_rows(deficiency, [("measure", "value"), *deficiency_values(data)])
    for (cell,) in deficiency.iter_rows(min_row=2, min_col=2, max_col=2):
        if isinstance(cell.value, float):
            cell.number_format = PERCENT_FORMAT
    write_rows(
        workbook.create_sheet("limitations"), [("limitation",), *((n,) for n in data.limitations)]
    )
    for sheet in workbook.worksheets:
        if sheet.title not in ("protocol", "deficiency", "limitations"):
            percent_columns(sheet, SHARE_COLUMNS)  # per-sheet: shares shown as percentages
    write_rows(workbook.create_sheet("items"), item_rows(Path(run_dir)))
    return workbook_bytes(workbook)


RATE_ROWS = {
    "unparsed rate": "unparsed",
    "refusal rate": "refused",
    "empty-answer rate": "empty",
    "error rate (no answer from the model)": "error",
}
"""Deficiency rows that are rates: written as numbers (percent format), not as their text."""

SHARE_COLUMNS = ("score", "ci_low", "ci_high", "random", "vlmeval_score", "unparsed", "refused",
                 "error", "closed", "open", "closed_minus_open")  # fmt: skip
"""Columns of the score sheets that hold shares (0–1), shown as percentages."""


def deficiency_values(data: ReportData) -> list[tuple[str, Any]]:
    rates = data.results.get("rates") or {}
    return [
        (measure, _rate(rates.get(RATE_ROWS[measure])) if measure in RATE_ROWS else text)
        for measure, text in data.deficiency
    ]


def _rate(value: Any) -> float | str:
    return "–" if value is None else float(value)


def _score_sheets(workbook: Workbook, data: ReportData) -> None:
    overall = data.results["overall"]
    ci = overall.get("ci") or [None, None]
    write_rows(workbook.create_sheet("overall"), [
        ("n", "score", "ci_low", "ci_high", "random", "vlmeval_score", "images", "chance_corrected"),
        (overall["n"], overall["score"], ci[0], ci[1], overall.get("random"), overall.get("vlmeval_score"),
         overall.get("images"), overall.get("chance_corrected")),
    ])  # fmt: skip
    headers = ("value", "n", "score", "ci_low", "ci_high", "random", "vlmeval_score",
               "unparsed", "refused", "error", "small", "images")  # fmt: skip
    used: set[str] = {"protocol", "overall"}
    for axis, rows in data.axes.items():
        body = [
            (r.value, r.n, r.score, r.ci[0] if r.ci else None, r.ci[1] if r.ci else None,
             r.random, r.vlmeval, r.unparsed, r.refused, r.error, r.small, r.images)
            for r in rows
        ]  # fmt: skip
        write_rows(workbook.create_sheet(sheet_name(f"by {axis}", used)), [headers, *body])
    worst = [
        (
            c.label,
            c.n,
            c.score,
            c.ci[0] if c.ci else None,
            c.ci[1] if c.ci else None,
            c.random,
            c.unparsed,
            c.images,
            bool(c.below_chance),
        )
        for c in data.worst
    ]
    columns = ("cell", "n", "score", "ci_low", "ci_high", "random", "unparsed", "images")
    write_rows(workbook.create_sheet("worst cells"), [(*columns, "below_chance"), *worst])
    gap = [
        (label, c["closed"], c["n_closed"], c["open"], c["n_open"], c["delta"],
         *(c.get("delta_ci") or (None, None)))
        for label, c in closed_open_cells(data.results)
    ]  # fmt: skip
    if gap:
        names = ("slice", "closed", "n_closed", "open", "n_open", "closed_minus_open")
        columns = (*names, "ci_low", "ci_high")
        write_rows(workbook.create_sheet("closed vs open"), [columns, *gap])
    from medlens.report.judges import PERCENT, judge_sections

    for section in judge_sections(data.results, PERCENT):
        sheet: list[Sequence[Any]] = [section.headers, *section.rows, ()]
        sheet += [(note,) for note in section.notes]
        write_rows(workbook.create_sheet(sheet_name(section.title, used)), sheet)


def item_rows(run_dir: Path) -> list[Sequence[Any]]:
    from medlens.runs.view import RunView

    store = RunView(run_dir)
    records = store.records()
    items = [item for item in store.items() if item.id in records]
    axes = sorted({key for item in items for key in item.meta})
    header = ("id", "question", "gold", "output", "extracted", "status", "score", "vlmeval_answer",
              "vlmeval_score", "error", *axes)  # fmt: skip
    rows: list[Sequence[Any]] = [header]
    for item in items:
        record = records[item.id]
        extraction = record.get("extraction") or {}
        compat = record.get("vlmeval") or {}
        error = record.get("error")
        rows.append((
            item.id, item.question, None if item.answer is None else str(item.answer),
            record.get("output"), extraction.get("answer"), extraction.get("status"),
            record.get("score"), compat.get("answer"), compat.get("score"),
            f"{error.get('type')}: {error.get('message')}" if error else None,
            *(item.meta.get(a) for a in axes),
        ))  # fmt: skip
    return rows
