"""A value computed in a forked child while this process goes on (issue 36).

Two steps of a large run are pure Python and need nothing the steps beside them make, so they
can use a second core: fingerprinting the benchmark's items (``describe``, while the model
loads) and re-reading every output with medlens's rules for the extraction-sensitivity figure
(while the other sections of results.json are built). The GIL serialises threads, and a
spawned worker would import medlens and receive every item by pickle, so
:func:`computed_aside` forks: the child computes the value, writes it to a pipe (pickled) and
leaves with ``os._exit`` (no exit handler of this process, no buffered output flushed twice,
nothing on disk); :meth:`Aside.result` reads it.

It forks only where a fork is safe and worth it: on Linux, with no other Python thread alive
(a study's scheduler, a Ray driver, a progress bar still refreshing, a notebook kernel: only
the forking thread exists in a child), and from ``MIN_FORK_ROWS`` rows on. Whatever goes wrong
in the child (an exception, a kill, a value the caller's check refuses) or in the fork itself,
the value is computed here when asked for, so the result is the same every way; only the wall
time differs. A child not waited for (this process is interrupted meanwhile) is killed and
reaped when the ``with`` block ends.
"""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Generic, TypeVar

T = TypeVar("T")

MIN_FORK_ROWS = 2_000
"""Below this many rows (items, outputs) the work costs less than a fork."""


def fork_is_safe() -> bool:
    """Linux, and this thread is the only Python thread (a fork copies only the caller's)."""
    return sys.platform == "linux" and threading.active_count() == 1


class Aside(Generic[T]):
    """A value computed by a child process or, failing that, here."""

    def __init__(self, compute: Callable[[], T], check: Callable[[T], bool]) -> None:
        self.compute, self.check = compute, check
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

    def result(self) -> T:
        """The child's value; computed here when there is no child or it did not deliver."""
        data, ended_well = self._collect()
        if ended_well:
            try:
                value: T = pickle.loads(data)  # our own child's bytes
            except Exception:
                pass
            else:
                if self.check(value):
                    return value
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


def _child(compute: Callable[[], object], write_end: int) -> None:
    """Compute, write the pickled value and leave at once (exit code 1 on any failure)."""
    code = 1
    try:
        gc.disable()  # short-lived: a full collection would touch (and copy) the parent's pages
        view = memoryview(pickle.dumps(compute(), protocol=pickle.HIGHEST_PROTOCOL))
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    finally:
        os._exit(code)


@contextmanager
def computed_aside(
    compute: Callable[[], T],
    rows: int,
    check: Callable[[T], bool] = lambda value: True,
    fork: bool | None = None,
) -> Iterator[Aside[T]]:
    """`compute` (work over `rows` rows) started in a forked child where that is safe and worth
    it (`fork`: None decides; True or False forces, for tests), collected with ``.result()``
    inside the block; a value `check` refuses is computed again here."""
    aside = Aside(compute, check)
    wanted = rows >= MIN_FORK_ROWS and fork_is_safe() if fork is None else fork
    if wanted:
        aside.start()
    try:
        yield aside
    finally:
        aside.abandon()
