"""Many runs on one benchmark as a (runs × items) matrix of scores and answers.

Runs are read through :class:`medlens.runs.view.RunView` (the store's rules decide which record
of an item wins); items come from the first run. Every run must have been made on the
same benchmark content (the content hash its ``run.json`` recorded); a run on other content, a
duplicate folder name or a run another process is writing is refused naming the run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import MedlensError, RunMismatchError
from medlens.core.items import Item
from medlens.runs.view import RunView
from medlens.scoring.metrics import random_baseline

MIN_RUNS = 5


@dataclass(frozen=True)
class Responses:
    """Scores (NaN where a run has no scored record) and extracted answers of N runs."""

    runs: list[str]
    """Folder names (how banks and audits name runs)."""
    paths: list[Path]
    specs: list[dict[str, Any]]
    items: list[Item]
    scores: np.ndarray
    answers: np.ndarray
    """(runs, items) object array: the extracted answer as text ("" when none)."""

    @property
    def benchmark(self) -> dict[str, Any]:
        return dict(self.specs[0].get("benchmark") or {})

    @property
    def observed(self) -> np.ndarray:
        return ~np.isnan(self.scores)

    def guess(self) -> np.ndarray:
        """Each item's guessing floor: its chance level (0 for open kinds)."""
        return np.array([min(random_baseline(item) or 0.0, 0.95) for item in self.items])


def run_spec(path: Path) -> dict[str, Any]:
    """The spec a run recorded; a run being written is refused (its numbers still move)."""
    view = RunView(path)
    holder = view.being_written()
    if holder is not None:
        raise MedlensError(f"{path}: the run is being written ({holder}); use it when done")
    return view.spec


def check_names(paths: Sequence[Path]) -> list[str]:
    """Folder names, refused when two runs share one (banks and audits name runs by folder)."""
    seen: dict[str, Path] = {}
    for path in paths:
        if path.name in seen:
            raise MedlensError(f"{path}: two runs are named {path.name!r} ({seen[path.name]} too)")
        seen[path.name] = path
    return list(seen)


def check_same_content(paths: Sequence[Path], specs: Sequence[dict[str, Any]]) -> None:
    """Every run on the first run's benchmark content (same items, split and content hash)."""
    first = specs[0].get("benchmark") or {}
    for path, spec in zip(paths[1:], specs[1:], strict=True):
        other = spec.get("benchmark") or {}
        if other.get("content_hash") != first.get("content_hash"):
            from medlens.core.fingerprint import older_hash_note

            raise RunMismatchError(
                f"{path}: ran on {other.get('spec')} ({other.get('n_items')} items, content "
                f"{str(other.get('content_hash'))[:12]}) but {paths[0]} on {first.get('spec')} "
                f"({first.get('n_items')} items, content {str(first.get('content_hash'))[:12]}); "
                "item science needs runs on the same benchmark content"
                f"{older_hash_note(first, other)}"
            )


def load_responses(paths: Sequence[Path], min_runs: int = MIN_RUNS) -> Responses:
    """Read the runs; refuse fewer than `min_runs`, mixed contents and duplicate names."""
    paths = [Path(p) for p in paths]
    if len(paths) < min_runs:
        shown = ", ".join(str(p) for p in paths) or "none"
        raise MedlensError(
            f"{shown}: {len(paths)} run(s) given; an item model needs at least {min_runs} runs "
            "on the same benchmark"
        )
    names = check_names(paths)
    specs = [run_spec(path) for path in paths]
    check_same_content(paths, specs)
    items = RunView(paths[0]).items()
    scores, answers = read_matrix(paths, items)
    return Responses(names, paths, specs, items, scores, answers)


def read_matrix(paths: Sequence[Path], items: Sequence[Item]) -> tuple[np.ndarray, np.ndarray]:
    """Scores and answer texts of each run on `items` (in their order)."""
    column = {item.id: j for j, item in enumerate(items)}
    scores = np.full((len(paths), len(items)), np.nan)
    answers = np.full((len(paths), len(items)), "", dtype=object)
    for i, path in enumerate(paths):
        for item_id, record in RunView(path).records().items():
            j = column.get(item_id)
            if j is None or record.get("error") is not None:
                continue
            if record.get("score") is not None:
                scores[i, j] = float(record["score"])
            answers[i, j] = answer_text((record.get("extraction") or {}).get("answer"))
    return scores, answers


def answer_text(answer: Any) -> str:
    """An extracted answer as one comparable string (a set of letters sorted and joined)."""
    if answer is None:
        return ""
    if isinstance(answer, (list, tuple, set)):
        return ",".join(sorted(str(a) for a in answer))
    return str(answer)
