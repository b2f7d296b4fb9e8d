"""The cyclic collector is paused while a benchmark loads and, on the local executor, the loaded
objects are frozen out of its scans while the run executes; a finished or failed run leaves it
as it was, and a Ray run is not frozen."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

import medlens.execution.evaluate as evaluation
import medlens.execution.preparation as preparation
from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.execution.collector import RUN_THRESHOLD, collector_paused, loaded_objects_frozen


def test_loading_pauses_the_collector_and_the_run_freezes_what_was_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}
    before = gc.get_threshold()
    load_items, run_local = preparation.load_items, evaluation.run_local

    def watched_load(*args: Any, **kwargs: Any) -> Any:
        seen["enabled while loading"] = gc.isenabled()
        return load_items(*args, **kwargs)

    async def watched_run(*args: Any, **kwargs: Any) -> None:
        seen["frozen while running"] = gc.get_freeze_count()
        seen["enabled while running"] = gc.isenabled()
        seen["threshold while running"] = gc.get_threshold()[0]
        await run_local(*args, **kwargs)

    monkeypatch.setattr(preparation, "load_items", watched_load)
    monkeypatch.setattr(evaluation, "run_local", watched_run)
    bench = write_jsonl_benchmark(tmp_path, n_items=12)
    named_run(f"jsonl:{bench}", "random?seed=1", tmp_path / "runs", "r")
    assert seen["enabled while loading"] is False
    assert seen["frozen while running"] > 0 and seen["enabled while running"] is True
    assert seen["threshold while running"] == RUN_THRESHOLD
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_threshold() == before


def test_both_end_with_their_block_even_on_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_paused(), loaded_objects_frozen():
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        raise RuntimeError("the run failed")
    assert gc.isenabled() and gc.get_freeze_count() == 0 and gc.get_threshold() == before
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_nothing_is_frozen_when_not_asked_and_a_callers_freeze_is_kept() -> None:
    before = gc.get_threshold()
    with loaded_objects_frozen(freeze=False):  # a Ray run
        assert gc.get_freeze_count() == 0 and gc.get_threshold() == before
    gc.freeze()
    try:
        with loaded_objects_frozen():
            pass
        assert gc.get_freeze_count() > 0  # the caller's freeze outlives the block
    finally:
        gc.unfreeze()
