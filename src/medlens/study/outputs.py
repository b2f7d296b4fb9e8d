"""A study's outputs, made when its runs end: each run's report, each configured board, the
models × benchmarks matrix, and the index page.

Boards show finished runs only (a run the budget or ``--only`` left unfinished is listed on the
index page instead), named by model label (``BoardOptions.labels``), so a board's ``pairs`` and a
``meta`` CSV's ``run`` column use the study's labels. When some run of a board has errored
items, the board compares the items every run scored (``--align intersect``) and says how many
it dropped. Each board is written as ``boards/<name>.html``, ``.md`` and ``.json``.

Layouts: a board's ``layout`` (gmai, medcmr, mmbu) is ``board --layout``; a layout with judged
columns (Med-CMR's open_all, MMBU's open columns) reads the board's ``judge``, or the one judge of
its benchmark when the study has exactly one (``board --judge``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.board import BoardOptions, build_board
from medlens.core.errors import MedlensError
from medlens.runs.files import write_atomic
from medlens.runs.layout import results_file
from medlens.study.entries import BoardEntry
from medlens.study.jobs import FINISHED_STATES
from medlens.study.plan import RunJob, StudyPlan

ACROSS = "across"
"""The file name of the models × benchmarks matrix under ``boards/``."""


@dataclass
class BoardFile:
    name: str
    benchmark: str | None
    runs: list[str]
    """Run keys on the board."""
    files: dict[str, str] = field(default_factory=dict)
    """format → path relative to the study folder."""
    notes: list[str] = field(default_factory=list)
    board: dict[str, Any] | None = None


def finished_runs(plan: StudyPlan, states: dict[str, dict[str, Any]]) -> list[RunJob]:
    """Runs with a record for every item they cover (errored items included), in plan order."""
    return [
        job for key, job in plan.runs.items() if states.get(key, {}).get("state") in FINISHED_STATES
    ]


def write_reports(plan: StudyPlan, runs: list[RunJob], render_new: bool = True) -> dict[str, str]:
    """Each finished run's report.html (relative path), rebuilt only when its results.json is
    newer; without `render_new`, only the reports that are already up to date."""
    from medlens.report import render

    written = {}
    for job in runs:
        folder = job.options.out / job.key
        report, results = folder / "report.html", results_file(folder)
        fresh = report.is_file() and report.stat().st_mtime >= results.stat().st_mtime
        if not fresh and not render_new:
            continue
        if not fresh:
            rendered = render(folder, "html")
            write_atomic(report, rendered if isinstance(rendered, str) else rendered.decode())
        written[job.key] = str(report.relative_to(plan.folder))
    return written


def board_pairs(entry: BoardEntry, runs: list[RunJob]) -> list[tuple[str, str]]:
    """The entry's pairs whose two models both have a finished run on the board."""
    models = {job.model for job in runs}
    return [(a, b) for a, b in entry.pairs if a in models and b in models]


def board_options(
    entry: BoardEntry | None, runs: list[RunJob], align: str, judge: str | None = None
) -> BoardOptions:
    """The board options a study board gives (`judge`: the layout's judge, see
    :func:`layout_judge`)."""
    paths = [job.options.out / job.key for job in runs]
    labels = {str(path): job.model for path, job in zip(paths, runs, strict=True)}
    values: dict[str, Any] = {"runs": paths, "labels": labels, "align": align}
    if entry is None:
        values["across"] = True
    else:
        pairs = ",".join(f"{a}:{b}" for a, b in board_pairs(entry, runs))
        values.update(by=list(entry.by), where=entry.where, meta=entry.meta,
                      reference=entry.reference, pairs=pairs)  # fmt: skip
        values.update(layout=entry.layout, judge=judge)
        if entry.score is not None:
            from medlens.analysis.score_source import parse_score_source

            values["score"] = parse_score_source(entry.score)
        # a layout board labels runs off the published set by default; an explicit
        # `reference` refuses, as `board --reference` does (checked before the first request:
        # study.board_references); `allow_partial` says otherwise
        values["allow_partial"] = entry.keeps_partial
    return BoardOptions(**values)


def layout_judge(plan: StudyPlan, entry: BoardEntry) -> str | None:
    """The judge of a layout's judged columns: the board's own, else the benchmark's only judge
    (None: no layout, a layout without judged columns, or no single judge to choose)."""
    from medlens.analysis.paper_columns import layout_columns

    if entry.layout is None or not any(c.judged for c in layout_columns(entry.layout)):
        return None
    if entry.judge is not None:
        return entry.judge
    found = [j.label for j in plan.study.judges.values() if j.applies_to(entry.benchmark)]
    return found[0] if len(found) == 1 else None


def write_boards(plan: StudyPlan, states: dict[str, dict[str, Any]]) -> list[BoardFile]:
    """Every configured board and the across matrix, over the finished runs."""
    done = finished_runs(plan, states)
    boards = []
    for entry in plan.study.boards:
        runs = [job for job in done if job.benchmark == entry.benchmark]
        boards.append(_write_board(plan, entry.name, entry, runs, states))
    if done:
        boards.append(_write_board(plan, ACROSS, None, done, states))
    return boards


def _write_board(
    plan: StudyPlan, name: str, entry: BoardEntry | None, runs: list[RunJob],
    states: dict[str, dict[str, Any]],
) -> BoardFile:  # fmt: skip
    from medlens.report.board import finite, render_board

    out = BoardFile(name, entry.benchmark if entry else None, [job.key for job in runs])
    missing = [job.key for job in plan.runs.values()
               if (entry is None or job.benchmark == entry.benchmark) and job not in runs]  # fmt: skip
    if missing:
        out.notes.append(f"not on the board (unfinished): {', '.join(missing)}")
    if not runs:
        out.notes.append("no finished run: no board")
        return out
    if entry is not None and len(board_pairs(entry, runs)) < len(entry.pairs):
        dropped = [f"{a}:{b}" for a, b in entry.pairs if (a, b) not in board_pairs(entry, runs)]
        out.notes.append(f"pairs left out (a model has no finished run): {', '.join(dropped)}")
    errored = any(states.get(job.key, {}).get("errors") for job in runs)
    try:
        judge = None if entry is None else layout_judge(plan, entry)
        board = build_board(board_options(entry, runs, "intersect" if errored else "same", judge))
    except MedlensError as exc:
        out.notes.append(f"board not built: {exc}")
        return out
    folder = plan.folder / "boards"
    folder.mkdir(parents=True, exist_ok=True)
    for fmt, suffix in (("html", "html"), ("md", "md")):
        rendered = render_board(board, fmt)
        write_atomic(folder / f"{name}.{suffix}", str(rendered))
        out.files[fmt] = f"boards/{name}.{suffix}"
    text = json.dumps(finite(board), ensure_ascii=False, allow_nan=False, indent=1)
    write_atomic(folder / f"{name}.json", text + "\n")
    out.files["json"] = f"boards/{name}.json"
    out.board = board
    return out


def relative(path: Path, folder: Path) -> str:
    return str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path)
