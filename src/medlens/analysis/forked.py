"""A float array computed in a forked child while this process goes on building results.

Building results.json re-reads every output with medlens's rules when a run was scored with
another reading (``--extract vlmeval``: the extraction-sensitivity figure). That re-reading
needs only the items and the records, and it is pure Python: about a third of the CPU time of
building a large run's results. A second core can do it meanwhile (issue 36), so
:func:`computed_aside` forks: the child computes the array, writes its bytes to a pipe and
leaves with ``os._exit`` (no exit handler of this process, no buffered output flushed twice,
nothing on disk); :meth:`Aside.result` reads them.

It forks only where a fork is safe and worth it: on Linux, with no other Python thread alive
(a study's scheduler, a Ray driver, a progress bar still refreshing: the array is then computed
here), and from ``MIN_FORK_ROWS`` rows on. Whatever goes wrong in the child (an exception,
a kill, a short write) or in the fork itself, the array is computed here when asked for, so
the result is the same every way; only the wall time differs. A child that is not waited for
(this process is interrupted meanwhile) is killed and reaped when the ``with`` block ends.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import numpy as np

MIN_FORK_ROWS = 2_000
"""Below this many rows the re-reading takes less than a fork's own cost."""


def fork_is_safe() -> bool:
    """Linux, and this thread is the only Python thread (a fork copies only the caller's)."""
    return sys.platform == "linux" and threading.active_count() == 1


class Aside:
    """An array of `rows` floats, computed by a child process or, failing that, here."""

    def __init__(self, compute: Callable[[], np.ndarray], rows: int) -> None:
        self.compute, self.rows = compute, rows
        self.pid: int | None = None
        self.pipe: int | None = None

    def start(self) -> None:
        """Fork the child (nothing happens when the fork fails: :meth:`result` computes)."""
        read_end, write_end = os.pipe()
        try:
            with warnings.catch_warnings():  # 3.12+ warns of the BLAS pool's idle OS threads
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return
        if pid == 0:  # the child: never returns
            os.close(read_end)
            _child(self.compute, write_end)
        os.close(write_end)
        self.pid, self.pipe = pid, read_end

    def result(self) -> np.ndarray:
        """The child's array; computed here when there is no child or it did not deliver."""
        data, ended_well = self._collect()
        if ended_well and len(data) == 8 * self.rows:
            return np.frombuffer(data, dtype="<f8").astype(float)
        return self.compute()

    def _collect(self) -> tuple[bytes, bool]:
        if self.pid is None or self.pipe is None:
            return b"", False
        chunks = []
        while chunk := os.read(self.pipe, 1 << 20):
            chunks.append(chunk)
        os.close(self.pipe)
        _, status = os.waitpid(self.pid, 0)
        self.pid = self.pipe = None
        return b"".join(chunks), os.waitstatus_to_exitcode(status) == 0

    def abandon(self) -> None:
        """Kill and reap a child not waited for (this process was interrupted meanwhile)."""
        if self.pipe is not None:
            os.close(self.pipe)
        if self.pid is not None:
            with suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        self.pid = self.pipe = None


def _child(compute: Callable[[], np.ndarray], write_end: int) -> None:
    """Compute, write the array's bytes and leave at once (exit code 1 on any failure)."""
    code = 1
    try:
        gc.disable()  # short-lived: a full collection would touch (and copy) the parent's pages
        data = np.ascontiguousarray(compute(), dtype="<f8").tobytes()
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    finally:
        os._exit(code)


@contextmanager
def computed_aside(
    compute: Callable[[], np.ndarray], rows: int, fork: bool | None = None
) -> Iterator[Aside]:
    """`compute` (returning `rows` floats) started in a forked child where that is safe and
    worth it (`fork`: None decides; True or False forces, for tests), collected with
    ``.result()`` inside the block."""
    aside = Aside(compute, rows)
    wanted = rows >= MIN_FORK_ROWS and fork_is_safe() if fork is None else fork
    if wanted:
        aside.start()
    try:
        yield aside
    finally:
        aside.abandon()
