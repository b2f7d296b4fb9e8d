"""Where a run's files lie: the one place that names them.

A run directory holds ``run.json`` (written first), ``items.jsonl``, the append-only
``records.jsonl``, the derived ``results.json`` and ``derived/`` files, and one folder per judge
stage under ``judges/`` (``judge.json`` first, then the append-only ``judgements.jsonl``, and
``agreement.json`` once ``medlens agreement`` compared it with people; a panel's members under
``judges/<panel>/members/<member>/``). Every other module asks this one
for a path (or, better, reads through :class:`medlens.runs.view.RunView`), so a file can be
renamed or moved in one place.
"""

from __future__ import annotations

from pathlib import Path

RUN_FILE = "run.json"
ITEMS_FILE = "items.jsonl"
RECORDS_FILE = "records.jsonl"
RESULTS_FILE = "results.json"
DERIVED_DIR = "derived"
JUDGES_DIR = "judges"
JUDGE_FILE = "judge.json"
JUDGEMENTS_FILE = "judgements.jsonl"
AGREEMENT_FILE = "agreement.json"
MEMBERS_DIR = "members"

RUN_INPUTS = (RUN_FILE, ITEMS_FILE, RECORDS_FILE)
"""The files a run's derived files are built from (beside every file under ``judges/``)."""


def is_run(path: Path | str) -> bool:
    """True when `path` is a run directory (it holds a run.json)."""
    return (Path(path) / RUN_FILE).is_file()


def run_file(path: Path | str) -> Path:
    return Path(path) / RUN_FILE


def items_file(path: Path | str) -> Path:
    return Path(path) / ITEMS_FILE


def records_file(path: Path | str) -> Path:
    return Path(path) / RECORDS_FILE


def results_file(path: Path | str) -> Path:
    return Path(path) / RESULTS_FILE


def derived_dir(path: Path | str) -> Path:
    return Path(path) / DERIVED_DIR


def judges_dir(path: Path | str) -> Path:
    """The folder of a run's judge stages."""
    return Path(path) / JUDGES_DIR


def is_judge_stage(folder: Path | str) -> bool:
    """True when `folder` holds a judge stage (its judge.json)."""
    return (Path(folder) / JUDGE_FILE).is_file()


def judge_file(folder: Path | str) -> Path:
    return Path(folder) / JUDGE_FILE


def judgements_file(folder: Path | str) -> Path:
    return Path(folder) / JUDGEMENTS_FILE


def agreement_file(folder: Path | str) -> Path:
    """A judge stage's agreement with human labels (``medlens agreement``)."""
    return Path(folder) / AGREEMENT_FILE


def members_dir(panel_folder: Path | str) -> Path:
    """The folder of a judge panel's member stages."""
    return Path(panel_folder) / MEMBERS_DIR


def has_records(path: Path | str) -> bool:
    """True when the run has written a records file (perhaps empty)."""
    return records_file(path).is_file()


def has_results(path: Path | str) -> bool:
    """True when the run's results.json exists (fresh or not)."""
    return results_file(path).is_file()
