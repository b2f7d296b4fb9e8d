"""The cyclic garbage collector around a run.

Loading a large benchmark allocates hundreds of thousands of long-lived objects (items, their
options and metadata, the predictions of a replay); each time the young generations fill, the
collector walks them again, and its full collections alone cost about 5% of re-scoring 26,000
GMAI answers. So the collector is paused while the benchmark loads (bounded work, nothing cyclic
to free) and what is loaded is then frozen out of its scans (``gc.freeze``) while the run
executes and its results are built; answers, records and everything else made meanwhile are
collected as usual. Both end with the run, so a long-lived process (a notebook calling
``medlens.evaluate``) is left as it was.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No automatic collection inside the block (an explicit ``gc.collect()`` still works)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def loaded_objects_frozen() -> Iterator[None]:
    """Every object alive on entry is left out of collections until the block ends."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
