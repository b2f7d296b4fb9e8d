"""One evaluation, start to finish: prepare (``preparation``: everything that can refuse), then,
under the run's lock, open or resume the store, execute locally, on Ray or in adaptive batches,
and checkpoint the records (owns running a prepared run).

The public API's ``medlens.evaluate(bench, model, **options)`` (:func:`medlens.api.evaluate`)
calls :func:`evaluate` here.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.model_info import parse_model_info
from medlens.core.records import Record
from medlens.execution.batches import BatchPlanner, ask_in_batches
from medlens.execution.cache import CacheChecks, with_cache
from medlens.execution.dispatch import dispatch_order, spread_first
from medlens.execution.execute import run_local
from medlens.execution.generation import generation_record, record_backend
from medlens.execution.manual import WithManualAnswers
from medlens.execution.options import (
    EXECUTORS,
    MAX_CONCURRENCY,
    RunOptions,
    check_run_path,
    default_name,
    run_dir_of,
    validate,
)
from medlens.execution.preparation import (
    LoadedBenchmark,
    check_adaptive_options,
    load_items,
    prepare,
    strategy_spec,
)
from medlens.execution.replies import redraw_in_document_order
from medlens.execution.requests import RunSettings
from medlens.runs.layout import is_run, records_file
from medlens.runs.store import RECORD_INTERVAL, RunStore, check_same_spec

__all__ = [
    "EXECUTORS",
    "MAX_CONCURRENCY",
    "LoadedBenchmark",
    "RunOptions",
    "RunOutcome",
    "check_run_path",
    "default_name",
    "evaluate",
    "load_items",
    "prepare",
    "run_dir_of",
    "strategy_spec",
    "validate",
]


@dataclass(frozen=True)
class RunOutcome:
    store: RunStore
    """The finished run's store, closed (its records and items stay in memory)."""
    done_before: int
    ran: int


def evaluate(
    options: RunOptions,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: Callable[[Record], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    *,
    loaded: LoadedBenchmark | None = None,
    planner: BatchPlanner | None = None,
) -> RunOutcome:
    """Run (or resume) an evaluation; returns its finished store. Its results are derived
    from the run directory by whoever asks for them (``analysis.artifacts``), once the lock is
    released.

    With a `planner` the run is adaptive: items are asked in the planner's batches
    (:mod:`medlens.execution.batches`) instead of all of them.

    Order: everything that can refuse (bad input, another spec, another writer) happens before
    the run directory is touched; the lock is held from opening the store to its last record.

    A caller stops a run early by raising from `on_progress` (a study's budget or Ctrl-C): the
    record that triggered it is already stored; with :class:`StopAfterInFlight` the requests in
    flight are awaited and stored too (any other error drops them); a rerun resumes from the
    records written.
    """
    from medlens.runs.lock import RunLockedError, hold_run_lock, lock_holder

    validate(options)
    if planner is not None:
        check_adaptive_options(options)
    path = run_dir_of(options)
    holder = lock_holder(path)  # refuse before loading a benchmark or a model for nothing
    if holder:
        raise RunLockedError(
            f"{path} is being written by {holder}; wait for it to finish or use another --name"
        )
    spec, items, model, settings, probe = prepare(options, loaded=loaded)
    if planner is not None:
        planner.check(items, spec["benchmark"])  # before anything is written
        spec["adaptive"] = planner.spec
    check_same_spec(path, spec)
    out_existed, run_existed = options.out.exists(), path.exists()
    note = on_note or (lambda message: None)
    try:
        with hold_run_lock(path, "medlens run", note=note):
            return _evaluate_locked(
                options,
                path,
                spec,
                items,
                (model, settings, probe),
                (on_start, on_progress, note),
                planner,
            )
    except MedlensError as exc:
        if not isinstance(exc, RunLockedError) and not run_existed:
            _remove_unstarted(path, options.out, out_existed)
        raise


def _remove_unstarted(path: Path, out: Path, out_existed: bool) -> None:
    """Bad input met by the first request (a rejected API key): leave no run behind."""
    records = records_file(path)
    if records.is_file() and records.stat().st_size:
        return
    shutil.rmtree(path, ignore_errors=True)
    if not out_existed and out.is_dir() and not any(out.iterdir()):
        out.rmdir()


def _evaluate_locked(
    options: RunOptions,
    path: Path,
    spec: dict[str, Any],
    items: list[Item],
    backend: tuple[Any, RunSettings, Any],
    callbacks: tuple[
        Callable[[int, int], None] | None, Callable[[Record], None] | None, Callable[[str], None]
    ],
    planner: BatchPlanner | None = None,
) -> RunOutcome:
    from medlens.execution.components import record_components, run_components
    from medlens.runs.provenance import record_benchmark_source, stamp_run

    model, settings, probe = backend
    on_start, on_progress, note = callbacks
    created = not is_run(path)
    store = RunStore.open_or_create(path, spec, items)
    store.run["generation"] = generation_record(model, settings)  # what requests carry
    record_backend(store.run, model, note)  # image settings, a started server
    record_benchmark_source(store.run, settings.benchmark_source, created)  # runs.provenance
    if options.model_info:  # describes the model, not the run: outside the spec hash
        store.run["model_info"] = parse_model_info(options.model_info)
    if options.admission:  # what the user states about the sources: the card reads it
        store.run["admission"] = dict(options.admission)
    for line in record_components(store.run, run_components(settings), created):
        note(line)
    stamp_run(store, options.model, created)  # environment is not part of the spec hash
    for message in store.damaged:
        note(f"{message}; its item is run again")
    for message in getattr(model, "notes", ()):
        note(message)
    try:
        selected = items if options.limit is None else items[: options.limit]
        done = store.done_ids(retry_errors=options.retry_errors)
        if not options.cache:  # --no-cache asks the model again for answers the cache gave
            done -= {rid for rid, record in store.records().items() if record.get("cached")}
        todo = dispatch_order([item for item in selected if item.id not in done], options.order)
        if options.cache and getattr(model, "reports_served_model", False):
            todo = spread_first(todo, options.cache_check)  # the live checks of cache hits
        if on_start:
            total = len(selected) if planner is None else planner.total(len(items))
            on_start(total, len(selected) - len(todo) if planner is None else len(done))

        def on_record(record: Record) -> None:
            store.append(record)
            if on_progress:
                on_progress(record)

        checks = CacheChecks(store, note)
        if planner is not None:
            work = _execute_batches(
                planner, store, items, (model, settings, probe), options, (on_record, checks)
            )
            asyncio.run(with_checkpoints(work, store.flush, RECORD_INTERVAL))
        elif todo:
            work = _execute(todo, items, model, settings, probe, options, (on_record, checks))
            asyncio.run(with_checkpoints(work, store.flush, RECORD_INTERVAL))
    finally:
        store.close()
        store.compact_if_needed()  # retried items: keep each item's latest record once
    if redraw_in_document_order(store.records(), items, options.extract):
        store.compact()
    ran = len(todo) if planner is None else len(store.done_ids()) - len(done)
    return RunOutcome(store, done_before=len(done), ran=ran)


async def with_checkpoints(
    work: Coroutine[Any, Any, None], flush: Callable[[], None], interval: float
) -> None:
    """Await `work`, calling `flush` every `interval` seconds meanwhile: records finished just
    before a pause (a burst, then a slow answer or a retry back-off) are written within
    `interval` instead of waiting in memory for the next append."""

    async def tick() -> None:
        while True:
            await asyncio.sleep(interval)
            flush()  # on the loop's thread, as every append is

    ticker = asyncio.create_task(tick())
    try:
        await work
    finally:
        ticker.cancel()


async def _execute_batches(
    planner: BatchPlanner,
    store: RunStore,
    items: list[Item],
    backend: tuple[Any, RunSettings, Any],
    options: RunOptions,
    callbacks: tuple[Callable[[Record], None], CacheChecks],
) -> None:
    """The planner's batches, one after another, through one model connection."""
    model, settings, probe = backend
    on_record, checks = callbacks
    wrapped = with_cache(model) if options.cache else model

    async def ask(batch: list[Item]) -> None:
        await run_local(dispatch_order(batch, options.order), wrapped, settings, on_record, probe)
        store.flush()

    def save_design(design: dict[str, Any]) -> None:
        store.run["adaptive"] = design
        store.save_run()

    try:
        await ask_in_batches(planner, store.records, items, ask, options.concurrency, save_design,
                             store.run.get("adaptive"))  # fmt: skip
    finally:
        checks.record(getattr(wrapped, "mismatch", None))
        await wrapped.aclose()


async def _execute(
    todo: list[Item],
    items: list[Item],
    model: Any,
    settings: RunSettings,
    probe: Any,
    options: RunOptions,
    callbacks: tuple[Callable[[Record], None], CacheChecks],
) -> None:
    on_record, checks = callbacks
    if options.executor == "ray":
        from medlens.execution.ray import run_ray

        await model.aclose()  # the driver's backend only named the spec
        await run_ray(
            todo,
            options.model,
            settings,
            on_record,
            probe=probe,
            items=items,
            address=options.ray_address,
            cache=options.cache,
        )
        return
    wrapped = with_cache(model, options.cache_check) if options.cache else model
    if settings.manual is not None:  # entered by hand: never asked, never cached
        wrapped = WithManualAnswers(wrapped, settings.manual)
    try:
        await run_local(todo, wrapped, settings, on_record, probe)
    finally:
        checks.record(getattr(wrapped, "check_entry", None))
        await wrapped.aclose()
