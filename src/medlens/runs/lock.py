"""One writer per run directory: an exclusive ``flock`` on ``<run>/.lock`` naming its holder.

The kernel releases a ``flock`` when its process dies, so a crashed run never blocks the next one.
The lock file's text (PID, host, command, start time) is only a description for the refused
writer's message; a file naming a process that no longer holds the lock is taken over with a note.
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


def lock_holder(run_dir: Path) -> str | None:
    """A description of the live process holding the run's lock, or None when nobody does."""
    path = Path(run_dir) / LOCK_NAME
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
            who = _describe(holder) if holder else "another process"
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
