"""One writer per run directory: an exclusive ``flock`` on ``<run>/.lock`` naming its holder.

Judge stages write only their own store (``judges/<name>/``) and read the run's records, so the
stages of one run may judge side by side (a study with several judges does): each holds a
*shared* ``flock`` on ``<run>/.lock`` (no ``run`` can write records meanwhile, and a judge is
refused while one does) and an exclusive one on ``<run>/.judge-<name>.lock`` (one writer per
judge store), which names its holder. results.json, which every stage rebuilds when it ends, is
written under a short exclusive lock of the run folder itself, so the last stage to finish
writes the results that hold every stage's lines.

The kernel releases a ``flock`` when its process dies, so a crashed run never blocks the next one.
The lock file's text (PID, host, command, start time) is only a description for the refused
writer's message; a file naming a process that no longer holds the lock is taken over with a note.
A judge stage's lock file is removed when the stage ends (a refused stage leaves the run as it
was); lock files sit in the run folder itself, never under ``judges/`` (whose files derived
results are stamped with).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from medlens.core.errors import MedlensError

LOCK_NAME = ".lock"
JUDGE_LOCK_PREFIX = ".judge-"
JUDGE_LOCK_SUFFIX = ".lock"


class RunLockedError(MedlensError):
    """Another process holds the run directory's write lock."""


def _describe(holder: dict[str, Any]) -> str:
    return (
        f"PID {holder.get('pid', '?')} on {holder.get('host', '?')} "
        f"({holder.get('command', '?')}, since {holder.get('started', '?')})"
    )


def _read_holder(handle: IO[str]) -> dict[str, Any] | None:
    handle.seek(0)
    text = handle.read()
    if not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return {"pid": "?", "host": "?", "command": text.strip()[:80]}
    return value if isinstance(value, dict) else None


def judge_lock_path(run_dir: Path, name: str) -> Path:
    """The lock file of the judge store `name` of the run."""
    return Path(run_dir) / f"{JUDGE_LOCK_PREFIX}{name}{JUDGE_LOCK_SUFFIX}"


def _exclusive_holder(path: Path) -> str | None:
    """The description of whoever holds `path`'s exclusive lock (None: nobody does)."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            return _describe(holder) if holder else "another process"
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None


def _judge_holders(run_dir: Path) -> list[str]:
    """Descriptions of the judge stages writing into the run now."""
    paths = sorted(Path(run_dir).glob(f"{JUDGE_LOCK_PREFIX}*{JUDGE_LOCK_SUFFIX}"))
    return [holder for path in paths if (holder := _exclusive_holder(path)) is not None]


def lock_holder(run_dir: Path) -> str | None:
    """A description of the live process(es) writing into the run (``run``, or judge stages),
    or None when nobody does."""
    return _exclusive_holder(Path(run_dir) / LOCK_NAME) or (
        "; ".join(_judge_holders(run_dir)) or None
    )


def _note_to_stderr(message: str) -> None:
    print(f"medlens: note: {message}", file=sys.stderr)


@contextlib.contextmanager
def hold_run_lock(
    run_dir: Path, command: str, note: Callable[[str], None] = _note_to_stderr
) -> Iterator[None]:
    """Hold the exclusive write lock of `run_dir` (created if needed) for the block.

    Raises RunLockedError naming the holder when another live process has it. Nothing in the
    directory is written when the lock is refused.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    path = run_dir / LOCK_NAME
    # "a" creates without truncating: a refused writer must not wipe the holder's description.
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - closed in finally
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            judges = "; ".join(_judge_holders(run_dir))
            who = _describe(holder) if holder else (judges or "another process")
            raise RunLockedError(
                f"{run_dir} is being written by {who}; wait for it to finish or use another --name"
            ) from None
        stale = _read_holder(handle)
        if stale is not None:
            note(
                f"{run_dir}: taking over the lock left by {_describe(stale)}, which is no longer running"
            )
        _write_holder(handle, command)
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


def _write_holder(handle: IO[str], command: str) -> None:
    holder = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command,
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps(holder) + "\n")
    handle.flush()


@contextlib.contextmanager
def hold_judge_lock(run_dir: Path, name: str, command: str) -> Iterator[None]:
    """Hold what a judge stage named `name` needs to write its store beside the run's records:
    a shared lock on the run (other judge stages may hold one too; ``run`` may not write) and
    the exclusive lock of the stage's own store.

    Raises RunLockedError naming the holder when ``run`` (or another writer of the whole run)
    or another process judging under the same name has it. Creates nothing but lock files in
    the existing run folder.
    """
    run_dir = Path(run_dir)
    handle = open(run_dir / LOCK_NAME, "a+", encoding="utf-8")  # noqa: SIM115 - closed below
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            who = _describe(holder) if holder else "another process"
            raise RunLockedError(
                f"{run_dir} is being written by {who}; judge it when that is done"
            ) from None
        try:
            with _hold_exclusive(judge_lock_path(run_dir, name), f"{command} {name}"):
                yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


@contextlib.contextmanager
def _hold_exclusive(path: Path, command: str) -> Iterator[None]:
    """Hold `path`'s exclusive lock, then remove the file (a refused or finished stage leaves
    no file behind). Whoever locked a file that was removed meanwhile locks the new one."""
    handle = _locked_file(path)
    try:
        _write_holder(handle, command)
        try:
            yield
        finally:
            path.unlink(missing_ok=True)  # while still holding it: see _locked_file
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


def _locked_file(path: Path) -> IO[str]:
    """`path` opened (created if needed) and exclusively locked; RunLockedError when another
    live process holds it."""
    while True:
        handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - the caller closes it
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(handle)
            handle.close()
            who = _describe(holder) if holder else "another process"
            name = path.name[len(JUDGE_LOCK_PREFIX) : -len(JUDGE_LOCK_SUFFIX)]
            raise RunLockedError(
                f"{path.parent}: judge stage {name!r} is being written by {who}; wait for it "
                "to finish or use another --name"
            ) from None
        try:
            same = os.fstat(handle.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return handle
        handle.close()  # its holder removed it as we opened it: lock the file there now


@contextlib.contextmanager
def results_written(run_dir: Path) -> Iterator[None]:
    """Wait for, then hold, the exclusive right to rebuild the run's results.json (short: one
    derivation; the judge stages of a run take turns here). The lock is on the run folder
    itself, so no file is left behind."""
    descriptor = os.open(run_dir, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)
