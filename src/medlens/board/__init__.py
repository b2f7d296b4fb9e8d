"""Leaderboards over N runs: ranks with intervals, ties, per-axis tables, paired families,
correlations with model metadata, item difficulty, and the model × benchmark matrix.
Imports ``analysis`` and below; rendering lives in ``report``."""

from __future__ import annotations

from medlens.board.build import BoardOptions, build_board

__all__ = ["BoardOptions", "build_board"]
