"""Checks of a study file's boards and judges made when the file is read (issue 30): a board's
``judge`` and ``score`` name judges of its benchmark, a ``judge`` without effect is refused, a
layout, ``by`` and ``where`` need its benchmark's axes (issue 49: checked when the file is read, not
after every run), and no judge is one of the evaluated models."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NoReturn, Protocol

import numpy as np

from medlens.analysis.paper_columns import layout_columns, missing_axes
from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.judges.identity import model_name, self_judge_reason
from medlens.sources import load_benchmark
from medlens.study.entries import BenchmarkEntry, BoardEntry, JudgeEntry, ModelEntry
from medlens.study.tomlkeys import KeyPath


class Failing(Protocol):
    """The study file being read (``file_values.StudyFile``): it fails naming the key's line."""

    def fail(self, key: KeyPath, problem: str) -> NoReturn: ...


def check_board_judges(
    study: Failing, boards: Sequence[BoardEntry], judges: Mapping[str, JudgeEntry]
) -> None:
    """A board's ``judge`` names a judge of the study that judges the board's benchmark."""
    for index, board in enumerate(boards):
        usable = [j for j, entry in judges.items() if entry.applies_to(board.benchmark)]
        for key, name in (("judge", board.judge), ("score", board.score_judge)):
            found = judges.get(name) if name is not None else None
            if name is not None and (found is None or not found.applies_to(board.benchmark)):
                study.fail(("boards", index, key), f"{name!r} is not a judge of benchmark "
                           f"{board.benchmark!r} (its judges: {', '.join(usable) or 'none'})")  # fmt: skip
        if board.judge is not None and not _judge_has_effect(board):
            study.fail(("boards", index, "judge"), "has no effect: a board's judge scores the "
                       "judged columns of its layout; give a layout with judged columns "
                       f'(medcmr, mmbu) or score = "combined:{board.judge}"')  # fmt: skip
        if board.judge is not None and board.score_judge not in (None, board.judge):
            study.fail(("boards", index, "score"), f"names judge {board.score_judge!r}, the "
                       f"board's judge is {board.judge!r}")  # fmt: skip


def _judge_has_effect(board: BoardEntry) -> bool:
    """A board's ``judge`` scores a layout's judged columns (or names its score's judge)."""
    if board.score_judge is not None:
        return True
    return board.layout is not None and any(c.judged for c in layout_columns(board.layout))


def check_board_axes(
    study: Failing, boards: Sequence[BoardEntry], benchmarks: Mapping[str, BenchmarkEntry]
) -> None:
    """A board's layout, ``by`` and ``where`` against its benchmark's items (images stay
    unread), as ``board`` would check them after every run: a layout whose axes the items lack,
    an unknown ``by`` axis, a ``where`` on an unknown axis or value is refused naming the line."""
    for index, board in enumerate(boards):
        if board.layout is None and not board.by and not board.where.strip():
            continue
        try:
            items = list(load_benchmark(benchmarks[board.benchmark].spec).items())
        except MedlensError as exc:
            study.fail(("boards", index, "benchmark"), str(exc))
        meta = item_columns(items)
        lacking = missing_axes(board.layout, set(meta)) if board.layout else []
        if lacking:
            study.fail(("boards", index, "layout"), f"layout {board.layout} needs the axes "
                       f"{', '.join(lacking)}, which benchmark {board.benchmark!r} lacks")  # fmt: skip
        for key, check in (("by", _check_by), ("where", _check_where)):
            try:
                check(board, meta)
            except MedlensError as exc:
                study.fail(("boards", index, key), re.sub(r"^--(by|where):? ", "", str(exc)))


def item_columns(items: Sequence[Item]) -> dict[str, np.ndarray]:
    """Each axis of the items (and ``kind``) as a column of strings ("" where an item has none)."""
    axes = sorted({key for item in items for key in item.meta})
    columns = {axis: np.array([item.meta.get(axis, "") for item in items], dtype=object)
               for axis in axes}  # fmt: skip
    columns["kind"] = np.array([item.kind for item in items], dtype=object)
    return columns


def _check_by(board: BoardEntry, meta: Mapping[str, np.ndarray]) -> None:
    from medlens.analysis.groupable import check_by_axes
    from medlens.checks.vocabulary import expand_levels

    check_by_axes(expand_levels(board.by, list(meta)), meta)


def _check_where(board: BoardEntry, meta: Mapping[str, np.ndarray]) -> None:
    from medlens.core.where import check_values, parse_where

    if board.where.strip():
        conditions = parse_where(board.where, sorted(meta))
        check_values(conditions, {c.axis: set(meta[c.axis].tolist()) for c in conditions})


def check_self_judging(
    study: Failing, models: Mapping[str, ModelEntry], judges: Mapping[str, JudgeEntry]
) -> None:
    """A judge that is one of the evaluated models is refused when the file is read."""
    for label, judge in judges.items():
        for model in models.values():
            reason = self_judge_reason(judge.spec, frozenset({model_name(model.spec)} - {""}))
            if reason:
                study.fail(("judges", label, "spec"), f"{reason} (model {model.label!r}): a "
                           "model judging its own answers is refused")  # fmt: skip
