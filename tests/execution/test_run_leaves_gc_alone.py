"""A run leaves Python's garbage collector as it found it, before, during and after: no pause,
no freeze, no other thresholds (issue 46: the speed came from less work, so a notebook or a
threaded caller running ``medlens.evaluate`` beside other work shares no process-wide state
with it). Measured before removing the pause and the freeze (``bench/rescore.py --baseline``,
26,000 rows): run + report within noise of each other, with and without them."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

import medlens.execution.evaluate as evaluation
import medlens.execution.preparation as preparation
from benchfiles import write_jsonl_benchmark
from cli_runs import named_run


def collector_state() -> tuple[bool, tuple[int, ...], int]:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def test_a_run_leaves_the_collector_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}
    before = collector_state()
    load_items, run_local = preparation.load_items, evaluation.run_local

    def watched_load(*args: Any, **kwargs: Any) -> Any:
        seen["loading"] = collector_state()
        return load_items(*args, **kwargs)

    async def watched_run(*args: Any, **kwargs: Any) -> None:
        seen["running"] = collector_state()
        await run_local(*args, **kwargs)

    monkeypatch.setattr(preparation, "load_items", watched_load)
    monkeypatch.setattr(evaluation, "run_local", watched_run)
    bench = write_jsonl_benchmark(tmp_path, n_items=12)
    named_run(f"jsonl:{bench}", "random?seed=1", tmp_path / "runs", "r")
    assert seen == {"loading": before, "running": before}
    assert collector_state() == before
