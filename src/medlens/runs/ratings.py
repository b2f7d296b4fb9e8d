"""The human ratings kept in a run's folder (``ratings/``): the file handling of the ``ratings``
stage, as :mod:`medlens.runs.judgements` is the judges'.

- ``ratings/<name>.jsonl``: append-only rating lines (each with its ``key``), synced on append;
  a torn last line from a kill is cut off before the next append and read only when whole.
- ``ratings/studies/<id>.json``: each exported study (its items, protocol and seed).
- ``ratings/sheets/<study>-<sha256[:16]><suffix>``: each imported sheet, as filled.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from medlens.runs.files import JsonLines, write_atomic

RATINGS_DIR = "ratings"


def ratings_file(run_dir: Path | str, name: str) -> Path:
    """The rating lines of the studies named `name`."""
    return Path(run_dir) / RATINGS_DIR / f"{name}.jsonl"


def study_file(run_dir: Path | str, study_id: str) -> Path:
    return Path(run_dir) / RATINGS_DIR / "studies" / f"{study_id}.json"


def has_study(run_dir: Path | str, study_id: str) -> bool:
    """True when the run exported a study of this id (a name with a slash is none)."""
    return bool(study_id) and "/" not in study_id and study_file(run_dir, study_id).is_file()


def append_rating_lines(run_dir: Path | str, name: str, lines: Iterable[dict[str, Any]]) -> None:
    """Append whole lines, synced (a torn last line from a kill is cut off first)."""
    JsonLines(ratings_file(run_dir, name)).append_synced(lines)


def read_rating_lines(run_dir: Path | str, name: str) -> list[dict[str, Any]]:
    """Stored lines (a torn last line from a kill mid-write is ignored unless it is whole)."""
    content = JsonLines(ratings_file(run_dir, name)).read()
    lines = [*content.lines, *([content.tail] if content.tail else [])]
    return [line.value for line in lines if isinstance(line.value, dict) and "key" in line.value]


def write_study(run_dir: Path | str, study_id: str, data: dict[str, Any]) -> None:
    path = study_file(run_dir, study_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def study_json(path: Path) -> Any:
    """A study file's JSON (ValueError or OSError when it is unreadable)."""
    return json.loads(path.read_text(encoding="utf-8"))


def study_files(run_dir: Path | str) -> Iterator[Path]:
    """The run's study files, in name order."""
    yield from sorted((Path(run_dir) / RATINGS_DIR / "studies").glob("*.json"))


def keep_sheet(run_dir: Path | str, study_id: str, file: Path, digest: str) -> Path:
    """A copy of a sheet as filled, once per content (written whole, then renamed)."""
    target = Path(run_dir) / RATINGS_DIR / "sheets" / f"{study_id}-{digest}{file.suffix.lower()}"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f".{target.name}.partial")
        shutil.copyfile(file, partial)
        os.replace(partial, target)
    return target
