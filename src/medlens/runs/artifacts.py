"""A run's derived files, declared with the inputs they are built from, kept while fresh.

An :class:`Artifact` is a declaration: its name, the run files it is built from (``inputs``),
where it lies for a variant (an extraction mode and a score source), how it is written and read
back, and how it is built. The layer that knows how to build it declares it
(``medlens.analysis.artifacts``: results, score tables, the extraction sensitivity); the run
view (:meth:`medlens.runs.view.RunView.derived`) reads it while fresh and otherwise builds it,
saves it and hands it back. Nothing below asks for a derived file, so no build is ever called
from below the layer that declared it.

A derived file is stamped with what it was built from: the sha256 of each of its input files
(``run.json``, ``items.jsonl``, ``records.jsonl``, every file under ``judges/`` but hidden ones:
as declared), the medlens version, the extraction mode and the score source. A file whose size and
modification time (ns) are those the stamp recorded is taken to be the file that was hashed
(what make and rsync assume); any other is hashed again, so a touched but unchanged file still
counts as fresh. A stale file is rebuilt, saying why through the caller's note (a file never
written is built quietly). Builds are saved only while no writer holds the run (its numbers
would move), atomically, one build at a time per run (``runs.lock.results_written``); a folder
that cannot be written to is read as it is.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat as stat_module
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.runs.layout import DERIVED_DIR, JUDGES_DIR, RESULTS_FILE, RUN_INPUTS

RULES = "rules"
"""The default score source: the records' own (rule) scores."""
STAMP = "derived_from"
"""Key of the stamp in a JSON derived file."""
STAT = "stat"
"""Sizes and modification times inside the stamp: machine facts, never part of a result."""
JUDGES = JUDGES_DIR + "/"
"""An input that stands for every file under the run's ``judges/``."""
EVERY_INPUT = (*RUN_INPUTS, JUDGES)


@dataclass(frozen=True)
class Variant:
    """Which version of a derived file: the extraction mode and the score source it reads."""

    extract: str
    score_source: str = RULES


@dataclass(frozen=True)
class Basis:
    """What a derived file is built from (or was: read back from its stamp)."""

    files: dict[str, str]
    """Input file (relative to the run directory) → sha256."""
    medlens_version: str
    extract: str
    score_source: str
    stat: dict[str, list[int]]
    """Input file → [size, mtime_ns] when hashed."""

    def stamp(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "medlens_version": self.medlens_version,
            "extract": self.extract,
            "score_source": self.score_source,
            STAT: self.stat,
        }

    def difference(self, stamp: Mapping[str, Any] | None) -> str | None:
        """Why a file with `stamp` is stale for this basis (None: it is fresh)."""
        if not isinstance(stamp, Mapping):
            return "it has no stamp of what it was built from"
        if stamp.get("medlens_version") != self.medlens_version:
            return (
                f"built by medlens {stamp.get('medlens_version')}, this is {self.medlens_version}"
            )
        for key in ("extract", "score_source"):
            if stamp.get(key) != getattr(self, key):
                return f"built for {key.replace('_', ' ')} {stamp.get(key)!r}"
        files = stamp.get("files")
        before: Mapping[str, Any] = files if isinstance(files, Mapping) else {}
        changed = sorted(
            name
            for name in set(before) | set(self.files)
            if before.get(name) != self.files.get(name)
        )
        if changed:
            shown = ", ".join(changed[:3]) + (
                f" and {len(changed) - 3} more" if len(changed) > 3 else ""
            )
            return f"{shown} changed since it was built"
        return None


def public_stamp(stamp: Mapping[str, Any]) -> dict[str, Any]:
    """A stamp as readers see it: its digests stay, its machine facts go."""
    return {k: v for k, v in stamp.items() if k != STAT}


def input_files(run_dir: Path, inputs: tuple[str, ...] = EVERY_INPUT) -> list[str]:
    """The run's files among `inputs` that exist, relative to the run directory."""
    names = [name for name in inputs if name != JUDGES and (run_dir / name).is_file()]
    if JUDGES in inputs:
        names += judge_inputs(run_dir)
    return names


def judge_inputs(run_dir: Path) -> list[str]:
    """Every file under the run's ``judges/``, relative to the run directory, in name order,
    but hidden ones (a dot name).

    The stages of a run judge side by side, and one derives the run's results while another
    still writes: hidden files are the temporaries of the writes in progress
    (``runs.files.write_atomic``: another stage's judge.json being rewritten), there for an
    instant and never an input. A folder removed meanwhile (a refused stage's,
    ``judges.stage``) is passed over: ``os.walk`` ignores what it can no longer list.
    """
    names = []
    for folder, _, files in os.walk(run_dir / JUDGES_DIR):
        names += [os.path.join(folder, file) for file in files if not file.startswith(".")]
    return sorted(str(Path(name).relative_to(run_dir)) for name in names)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def basis_of(
    run_dir: Path,
    variant: Variant,
    known: Mapping[str, Any] | None = None,
    inputs: tuple[str, ...] = EVERY_INPUT,
) -> Basis:
    """The current basis; files whose size and mtime match `known`'s stamp keep its digest."""
    from medlens.core import version

    files, stat = {}, {}
    before = known if isinstance(known, Mapping) else {}
    old_files, old_stat = before.get("files") or {}, before.get(STAT) or {}
    for name in input_files(run_dir, inputs):
        try:
            info = (run_dir / name).stat()
            now = [info.st_size, info.st_mtime_ns]
            if not stat_module.S_ISREG(info.st_mode):
                continue
            if old_stat.get(name) == now and name in old_files:
                files[name] = str(old_files[name])
            else:
                files[name] = file_sha256(run_dir / name)
        except FileNotFoundError:
            continue  # removed since it was listed (another stage's refused folder): not an input
        stat[name] = now
    return Basis(files, version.__version__, variant.extract, variant.score_source, stat)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "source"


def results_place(run_dir: Path, run_extract: str, variant: Variant) -> Path:
    """results.json for the run's own mode and rule scores, else a file of its own."""
    if variant.extract == run_extract and variant.score_source == RULES:
        return run_dir / RESULTS_FILE
    return derived_place("results", "json")(run_dir, run_extract, variant)


def derived_place(name: str, suffix: str) -> Callable[[Path, str, Variant], Path]:
    """``derived/NAME.EXTRACT.SOURCE.SUFFIX`` of a variant."""

    def place(run_dir: Path, run_extract: str, variant: Variant) -> Path:
        file = f"{name}.{slug(variant.extract)}.{slug(variant.score_source)}.{suffix}"
        return run_dir / DERIVED_DIR / file

    return place


Stamped = tuple[Mapping[str, Any] | None, Any]
"""A saved file's stamp, and what else reading it cheaply gave (its parsed JSON, say)."""


@dataclass(frozen=True, eq=False)
class Artifact:
    """A derived file of a run (see the module docstring); compared by identity.

    Its builders and readers take the run view (:class:`medlens.runs.view.RunView`, typed
    ``Any`` here: the view is built on this module)."""

    name: str
    inputs: tuple[str, ...]
    """The run files it is built from (``EVERY_INPUT``, or fewer)."""
    place: Callable[[Path, str, Variant], Path]
    """(run directory, the run's own extraction mode, variant) → its file."""
    stamped: Callable[[Path], Stamped | None]
    """A saved file's stamp (None: unreadable), cheaply."""
    load: Callable[[Any, Path, Any], Any]
    """The content of a fresh saved file (from what :attr:`stamped` gave beside its stamp)."""
    encode: Callable[[Any, dict[str, Any]], bytes]
    """Content and stamp → the file's bytes."""
    attach: Callable[[Any, dict[str, Any]], Any]
    """Built content as a reader of the saved file would get it (its stamp attached)."""
    build: Callable[[Any, Variant], dict[Artifact, Any]]
    """Builds the content of this artifact, and of any built alongside it (results and
    their score table come from one build)."""


@dataclass(frozen=True)
class Fresh:
    """A saved derived file that is fresh."""

    path: Path
    stamp: Mapping[str, Any] | None
    extra: Any
    """What reading its stamp gave besides (``Artifact.stamped``)."""
