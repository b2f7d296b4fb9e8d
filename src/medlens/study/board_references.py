"""A study's boards against their published tables, checked before the study's first request
(issue 49: a board whose ``reference`` was a file of another item set was refused only after
every run had answered).

A board refuses runs off the published item set when it has an explicit ``reference`` (as
``board --reference`` does) or ``allow_partial = false``; such a board is checked here with the
one rule ``board`` and ``calibrate`` use (``analysis.comparability.comparable_rows``), on the
spec its runs will record (benchmark fingerprint, selection, reading: ``RunPreview.spec``) and
every item they will score. A board that keeps such runs (``allow_partial = true``, or a layout's
own table) only labels them at the end, so it is left alone.
"""

from __future__ import annotations

from collections.abc import Mapping

from medlens.core.errors import InputError, MedlensError
from medlens.execution.preparation import LoadedBenchmark
from medlens.study.entries import BoardEntry
from medlens.study.plan import StudyPlan
from medlens.study.preview import RunPreview


def check_board_references(
    plan: StudyPlan, loaded: Mapping[str, LoadedBenchmark], previews: Mapping[str, RunPreview]
) -> None:
    """Refuse, naming the board's line, a board that would refuse its runs at the end."""
    for number, board in enumerate(plan.study.boards, start=1):
        preview = _first_full_run(plan, board, previews)
        if board.keeps_partial or preview is None or board.benchmark not in loaded:
            continue
        reasons = _reasons(board, preview, loaded[board.benchmark])
        if reasons:
            key = "reference" if board.reference is not None else "allow_partial"
            where = f"line {board.line}, key boards[{number}].{key}"
            raise InputError(plan.study.path, where, reasons)


def _first_full_run(
    plan: StudyPlan, board: BoardEntry, previews: Mapping[str, RunPreview]
) -> RunPreview | None:
    """The preview of the board's first run that answers the whole benchmark (a sampled run's
    subset is drawn later; every full run of a benchmark records the same items)."""
    for job in plan.selected_runs:
        preview = previews.get(job.key)
        if job.benchmark == board.benchmark and job.sample is None and preview and preview.spec:
            return preview
    return None


def _reasons(board: BoardEntry, preview: RunPreview, loaded: LoadedBenchmark) -> str | None:
    """Why the board's runs will not be comparable with its table (None: they will be)."""
    from medlens.analysis.comparability import comparable_rows, refusal
    from medlens.analysis.reference_tables import load_reference
    from medlens.board.published import layout_reference

    split = str(preview.spec.get("benchmark", {}).get("split", ""))
    name = board.reference or layout_reference(board.layout, split)
    if name is None:
        return None
    try:
        table = load_reference(name)
    except MedlensError as exc:
        return str(exc)
    rows = [row for row in table.rows if row.split == split] or list(table.rows)
    _, items = loaded
    axes = {key for item in items for key in item.meta} | {"kind"}
    verdict = comparable_rows(table, rows, preview.spec, preview.selected, axes, board.where)
    if not verdict.reasons:
        return None
    keep = "allow_partial = true keeps its runs"
    return str(refusal(f"benchmark {board.benchmark!r}", table, verdict.reasons, keep))
