"""Derived results, reused while fresh: ``results.json`` and the score table beside it.

A derived file is stamped with what it was built from: the sha256 of each input file of the run
(``run.json``, ``items.jsonl``, ``records.jsonl`` and every file under ``judges/``), the medlens
version, the extraction mode and the score source (``"rules"``, or a source named by the caller,
e.g. ``judge:NAME``). A reader uses the file while the stamp matches and rebuilds it otherwise,
saying why on stderr (a file that was never written is built quietly); nothing re-reads an
answer the records already hold.

Files: ``results.json`` (+ ``derived/scores.EXTRACT.rules.arrow``, the score table of
:mod:`medlens.analysis.score_file`) for the run's own extraction mode and rule scores, which
``run`` and ``judge`` write when they finish. Another mode or source gets its own files,
``derived/results.EXTRACT.SOURCE.json`` beside them; results.json is never overwritten by them.

A file whose size and modification time (ns) are those the stamp recorded is taken to be the
file that was hashed (what make and rsync assume); any other is hashed again, so a touched but
unchanged file still counts as fresh. Readers write what they rebuilt only while no writer
holds the run's lock, and atomically; a folder they cannot write to is read as it is.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.analysis.score_source import ScoreSource, sourced_run
from medlens.runs.store import RunStore

if TYPE_CHECKING:  # numpy and the scoring rules: only where results are rebuilt
    from medlens.analysis.score_table import ScoreTable

RULES = "rules"
"""The default score source: the records' own (rule) scores."""
DERIVED_DIR = "derived"
STAMP = "derived_from"
"""Key of the stamp in results.json (left out of what readers return)."""
_STAT = "stat"
"""Sizes and modification times inside the stamp: machine facts, never part of a result."""
_INPUTS = ("run.json", "items.jsonl", "records.jsonl")

Note = Callable[[str], None]
BuildResults = Callable[[RunStore], "tuple[dict[str, Any], ScoreTable | None]"]
"""Builds the results (and, when it has one, the score table) of one score source."""


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


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
            _STAT: self.stat,
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


def input_files(run_dir: Path) -> list[str]:
    """The run's files a derived file depends on, relative to the run directory."""
    names = [name for name in _INPUTS if (run_dir / name).is_file()]
    judges = run_dir / "judges"
    if judges.is_dir():
        names += sorted(
            str(path.relative_to(run_dir)) for path in judges.rglob("*") if path.is_file()
        )
    return names


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def basis_of(
    run_dir: Path, extract: str, score_source: str, known: Mapping[str, Any] | None = None
) -> Basis:
    """The current basis; files whose size and mtime match `known`'s stamp keep its digest."""
    from medlens.core import version

    files, stat = {}, {}
    before = known if isinstance(known, Mapping) else {}
    old_files, old_stat = before.get("files") or {}, before.get(_STAT) or {}
    for name in input_files(run_dir):
        info = (run_dir / name).stat()
        now = [info.st_size, info.st_mtime_ns]
        if old_stat.get(name) == now and name in old_files:
            files[name] = str(old_files[name])
        else:
            files[name] = file_sha256(run_dir / name)
        stat[name] = now
    return Basis(files, version.__version__, extract, score_source, stat)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "source"


def results_path(run_dir: Path, run_extract: str, extract: str, score_source: str) -> Path:
    """results.json for the run's own mode and rule scores, else a file of its own."""
    if extract == run_extract and score_source == RULES:
        return run_dir / "results.json"
    return run_dir / DERIVED_DIR / f"results.{_slug(extract)}.{_slug(score_source)}.json"


def score_path(run_dir: Path, extract: str, score_source: str) -> Path:
    return run_dir / DERIVED_DIR / f"scores.{_slug(extract)}.{_slug(score_source)}.arrow"


def _read_json(path: Path) -> dict[str, Any] | None:
    from medlens.runs.files import loads_line

    try:
        data = loads_line(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def public(results: Mapping[str, Any]) -> dict[str, Any]:
    """Results as readers return them: the stamp's digests stay, its machine facts go."""
    out = dict(results)
    stamp = out.get(STAMP)
    if isinstance(stamp, Mapping):
        out[STAMP] = {k: v for k, v in stamp.items() if k != _STAT}
    return out


def build_rules(store: RunStore) -> tuple[dict[str, Any], ScoreTable | None]:
    """Rule scores: ``build_results`` and its score table."""
    from medlens.analysis.results import build_results_and_table

    return build_results_and_table(store)


def _writable(run_dir: Path) -> bool:
    from medlens.runs.lock import lock_holder

    return lock_holder(run_dir) is None


def save_derived(
    store: RunStore,
    basis: Basis,
    results: dict[str, Any],
    table: ScoreTable | None,
    *,
    results_file: bool = True,
) -> None:
    """Write the stamped results (unless `results_file` is False: the caller writes them) and
    the score table; a folder that cannot be written to keeps what it had."""
    from medlens.analysis.score_file import write_score_file
    from medlens.runs.files import write_atomic

    path = results_path(store.path, _run_extract(store), basis.extract, basis.score_source)
    try:
        if table is not None:
            served = results.get("served") or {}
            write_score_file(
                score_path(store.path, basis.extract, basis.score_source), table,
                basis.stamp(), served,
            )  # fmt: skip
        if results_file:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    except OSError:
        pass  # a read-only copy of a run: the results stay in memory


def _run_extract(store: RunStore) -> str:
    return str(store.run.get("spec", {}).get("extract") or "medlens")


def derive_and_save(store: RunStore) -> dict[str, Any]:
    """The DeriveResults of ``run`` and ``judge``: stamped rule results, with the score table
    written beside them (the caller writes results.json, under its lock)."""
    extract = _run_extract(store)
    basis = basis_of(store.path, extract, RULES)
    results, table = build_rules(store)
    results[STAMP] = basis.stamp()
    save_derived(store, basis, results, table, results_file=False)
    return results


def _run_of(run: Path | str | RunStore) -> tuple[Path, RunStore | None, dict[str, Any]]:
    """The run directory, the store when the caller has one open, and run.json (records are
    only read when something has to be rebuilt)."""
    from medlens.runs.store import read_run_file

    if isinstance(run, RunStore):
        return run.path, run, run.run
    return Path(run), None, read_run_file(Path(run))


def _rebuild(
    run_dir: Path,
    store: RunStore | None,
    basis: Basis,
    message: str | None,
    build: BuildResults | None,
    note: Note | None,
) -> tuple[dict[str, Any], ScoreTable | None]:
    """Build (a file that did not exist yet is built without a word), stamp and save."""
    if note is not None and message is not None:
        note(message)
    store = store if store is not None else RunStore.open(run_dir)
    results, table = (build or build_rules)(store)
    results[STAMP] = basis.stamp()
    if _writable(run_dir):
        save_derived(store, basis, results, table)
    return results, table


def fresh_results(
    run: Path | str | RunStore,
    *,
    score_source: str = RULES,
    extract: str | None = None,
    build: BuildResults | None = None,
    note: Note | None = _stderr,
) -> dict[str, Any]:
    """The run's results for this extraction mode and score source: read when fresh, else
    rebuilt (saying why through `note`) and saved when no writer holds the run.

    `build` makes the results of any other mode or source; rule scores of the run's own mode
    need none.
    """
    run_dir, store, run_file = _run_of(run)
    own = str(run_file.get("spec", {}).get("extract") or "medlens")
    extract = extract or own
    if build is None and (extract != own or score_source != RULES):
        raise ValueError(f"no builder for extraction {extract!r} and score source {score_source!r}")
    path = results_path(run_dir, own, extract, score_source)
    saved = _read_json(path) if path.is_file() else None
    stamp = saved.get(STAMP) if saved else None
    basis = basis_of(run_dir, extract, score_source, stamp)
    reason = None if saved is None else basis.difference(stamp)
    if saved is not None and reason is None:
        saved["run"] = run_dir.name  # a moved or copied run keeps its results
        return public(saved)
    message = None if saved is None else f"{path} is stale ({reason}): rebuilt"
    return public(_rebuild(run_dir, store, basis, message, build, note)[0])


def fresh_score_table(run: Path | str | RunStore, *, note: Note | None = _stderr) -> ScoreTable:
    """The run's rule score table: from its fresh score file, else rebuilt with the results
    (both saved when no writer holds the run)."""
    from medlens.analysis.score_file import read_columns, read_stamp, score_table_of

    run_dir, store, run_file = _run_of(run)
    extract = str(run_file.get("spec", {}).get("extract") or "medlens")
    path = score_path(run_dir, extract, RULES)
    found = read_stamp(path) if path.is_file() else None
    basis = basis_of(run_dir, extract, RULES, found[0] if found else None)
    reason = None if found is None else basis.difference(found[0])
    if found is not None and reason is None:
        return score_table_of(read_columns(path))
    message = None if found is None else f"{path} is stale ({reason}): rebuilt"
    table = _rebuild(run_dir, store, basis, message, None, note)[1]
    assert table is not None  # rule scores always have their table
    return table


def fresh_score_file(run_dir: Path) -> tuple[Path, dict[str, Any]] | None:
    """The run's rule score file and its served-model summary when the file is fresh (None:
    stale or absent, and nothing is rebuilt: the board then reads the records itself)."""
    from medlens.analysis.score_file import read_stamp
    from medlens.runs.store import read_run_file

    run_file = read_run_file(run_dir)
    extract = str(run_file.get("spec", {}).get("extract") or "medlens")
    path = score_path(run_dir, extract, RULES)
    found = read_stamp(path) if path.is_file() else None
    if found is None or basis_of(run_dir, extract, RULES, found[0]).difference(found[0]):
        return None
    return path, found[1]


def fresh_served(run_dir: Path) -> dict[str, Any] | None:
    """The served-model summary of a fresh score file (None: read the records instead)."""
    found = fresh_score_file(Path(run_dir))
    return None if found is None else found[1]


def sourced_score_table(
    run_dir: Path | str, source: ScoreSource
) -> tuple[ScoreTable, dict[str, Any] | None]:
    """(the run's score table under `source`, its judged coverage): rule scores from the run's
    fresh derived score file, a judged source's from the records and the
    judge's verdicts (its coverage; None for rules)."""
    from medlens.analysis.score_table import score_table

    if not source.judged:
        return fresh_score_table(Path(run_dir)), None
    store = RunStore.open(run_dir)
    sourced = sourced_run(store.path, store.items(), store.records(), source)
    return score_table(sourced.items, sourced.records, sourced.scope), sourced.coverage
