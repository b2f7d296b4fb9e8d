"""The cyclic garbage collector around a run.

Loading a large benchmark allocates hundreds of thousands of long-lived objects (items, their
options and metadata, a replay's predictions); each time the young generations fill, the
collector walks them again, and its full collections cost about 0.5 s CPU of re-scoring 26,000
GMAI answers (issue 36). So the collector is paused while the benchmark loads and its items are
selected and described (bounded work, nothing cyclic to free; not while a model loads), and
for a run on this machine what is then alive is frozen out of its scans (``gc.freeze``) while
the run executes and its results are built, and the youngest generation is collected every
20,000 net allocations instead of 700 (``RUN_THRESHOLD``: the young collections then cost
~0.1 s less of that replay); answers, records and everything else made meanwhile are still
collected. Both end with the run, so a long-lived process (a notebook
calling ``medlens.evaluate``) is left as it was.

A Ray run is left alone: with the loaded objects frozen, the Ray driver of
``tests/execution/test_ray.py`` waited forever (issue 36's first try).
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


RUN_THRESHOLD = 20_000
"""The youngest generation's collection threshold while a run executes (Python's default: 700)."""


@contextmanager
def loaded_objects_frozen(freeze: bool = True) -> Iterator[None]:
    """With `freeze`, every object alive on entry is left out of collections until the block
    ends (objects frozen before entry stay frozen) and young collections are rarer
    (``RUN_THRESHOLD``); without it, nothing changes."""
    if not freeze or gc.get_freeze_count():
        yield
        return
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], RUN_THRESHOLD), *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
