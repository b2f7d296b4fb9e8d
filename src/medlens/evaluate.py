"""One evaluation, start to finish: load, fingerprint, open or resume the run, execute, summarise."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.cache import with_cache
from medlens.errors import MedlensError, SpecError
from medlens.execute import RunSettings, run_local
from medlens.exemplars import Exemplars, load_exemplars
from medlens.items import Item, describe
from medlens.models import MODELS, ModelContext, load_model
from medlens.prompts import PROMPT_STYLES
from medlens.results import build_results
from medlens.selection import run_provenance, select_run_items
from medlens.sources import load_benchmark
from medlens.specs import parse_spec
from medlens.store import Record, RunStore
from medlens.strategies import Strategy, parse_strategy

EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class RunOptions:
    """What `medlens run` was asked to do."""

    bench: str
    model: str
    out: Path = Path("runs")
    name: str | None = None
    limit: int | None = None
    concurrency: int = 8
    prompt: str = "medlens"
    extract: str = "medlens"
    probe: str | None = None
    seed: int = 0
    executor: str = "local"
    ray_address: str | None = None
    cache: bool = True
    strategy: str = "zero-shot"
    """``zero-shot|few-shot:K|cot|self-consistency:K``, joined by ``+``."""
    exemplars: str | None = None
    """Benchmark spec of few-shot exemplars (default: the split the loader names)."""
    where: str | None = None
    sample: int | None = None
    stratify: str | None = None
    exclude: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    store: RunStore
    results: dict[str, Any]
    done_before: int
    ran: int


def default_name(options: RunOptions) -> str:
    """`<benchmark>-<model>[-<probe>]`, with anything unsafe for a folder name replaced."""
    bench, model = parse_spec(options.bench), parse_spec(options.model)
    parts = [bench.name, model.name]
    if model.argument:
        parts.append(Path(model.argument.rstrip("/")).name)
    if options.probe:
        parts.append(options.probe)
    return re.sub(r"[^A-Za-z0-9._-]+", "_", "-".join(parts)).strip("_.")


def validate(options: RunOptions) -> None:
    if options.prompt not in PROMPT_STYLES:
        raise SpecError(f"--prompt {options.prompt!r}: expected one of {', '.join(PROMPT_STYLES)}")
    if options.extract not in ("medlens", "vlmeval"):
        raise SpecError(f"--extract {options.extract!r}: expected medlens or vlmeval")
    if options.executor not in EXECUTORS:
        raise SpecError(f"--executor {options.executor!r}: expected one of {', '.join(EXECUTORS)}")
    if options.concurrency < 1:
        raise SpecError("--concurrency must be at least 1")
    if options.limit is not None and options.limit < 0:
        raise SpecError("--limit must not be negative")


def prepare(options: RunOptions) -> tuple[RunStore, list[Item], Any, RunSettings, Any]:
    """Everything that can fail on bad input happens here, before the run directory exists."""
    validate(options)
    MODELS.get(parse_spec(options.model).name)  # fail on a mistyped model before a long load
    benchmark = load_benchmark(options.bench)
    items = list(benchmark.items())
    items, selection = select_run_items(
        benchmark, items, options.where, options.sample, options.stratify, options.exclude,
        options.seed,
    )  # fmt: skip
    info = describe(benchmark, items)
    probe = None
    if options.probe:
        from medlens.probes import IMAGE_PROBES, get_probe

        probe = get_probe(options.probe, options.seed)
        if options.probe in IMAGE_PROBES and not any(item.images for item in items):
            raise SpecError(
                f"--probe {options.probe}: {options.bench} has no images, so the probe would "
                "change nothing (text probes: options-only, shuffle-options)"
            )
        items = [probe.apply_item(item) for item in items]
    context = ModelContext(
        items=items,
        seed=options.seed,
        concurrency=options.concurrency,
        describe_only=options.executor == "ray",  # Ray workers build their own backends
    )
    model = load_model(options.model, context)
    strategy, exemplars = prepare_strategy(options, items, model)
    settings = RunSettings(
        prompt=options.prompt,
        extract=options.extract,
        concurrency=options.concurrency,
        probe=options.probe,
        seed=options.seed,
        strategy=strategy,
        exemplars=exemplars,
    )
    spec = {
        "benchmark": info.to_json(),
        "model": model.spec,
        "prompt": options.prompt,
        "extract": options.extract,
        "probe": options.probe,
        "seed": options.seed,
        "params": dict(settings.params),
        **run_provenance(options.bench, info.content_hash, selection),
    }
    if not strategy.is_zero_shot:  # zero-shot runs keep the spec (and hash) they always had
        spec["strategy"] = strategy_spec(strategy, exemplars)
    path = options.out / (options.name or default_name(options))
    created = not (path / "run.json").is_file()
    store = RunStore.open_or_create(path, spec, items)
    from medlens.provenance import stamp_run

    stamp_run(store, options.model, created)  # environment is not part of the spec hash
    return store, items, model, settings, probe


def prepare_strategy(
    options: RunOptions, items: list[Item], model: Any
) -> tuple[Strategy, Exemplars | None]:
    """Parse ``--strategy``; read the exemplars; refuse sampling on a backend that cannot."""
    strategy = parse_strategy(options.strategy)
    if options.exemplars and not strategy.few_shot:
        raise SpecError("--exemplars is only used with --strategy few-shot:K")
    if strategy.samples > 1 and not getattr(model, "honours_sampling", False):
        raise SpecError(
            f"--strategy {strategy.text}: {parse_spec(options.model).name} cannot draw "
            "samples with their own temperature and seed (use an openai: backend)"
        )
    exemplars = None
    if strategy.few_shot:
        exemplars = load_exemplars(
            options.bench, options.exemplars, items, strategy.few_shot, options.seed
        )
    return strategy, exemplars


def strategy_spec(strategy: Strategy, exemplars: Exemplars | None) -> dict[str, Any]:
    """The strategy as recorded in the run spec, with the exemplars' spec and ids."""
    recorded: dict[str, Any] = {"name": strategy.text}
    if exemplars is not None:
        recorded["exemplars"] = {"spec": exemplars.spec, "ids": exemplars.ids()}
    return recorded


def evaluate(
    options: RunOptions,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: Callable[[Record], None] | None = None,
) -> RunOutcome:
    """Run (or resume) an evaluation; returns the store and its freshly derived results."""
    out_existed = options.out.exists()
    run_existed = (options.out / (options.name or default_name(options)) / "run.json").exists()
    store, items, model, settings, probe = prepare(options)
    try:
        selected = items if options.limit is None else items[: options.limit]
        done = store.done_ids()
        todo = [item for item in selected if item.id not in done]
        if on_start:
            on_start(len(selected), len(selected) - len(todo))

        def on_record(record: Record) -> None:
            store.append(record)
            if on_progress:
                on_progress(record)

        if todo:
            asyncio.run(_execute(todo, items, model, settings, probe, options, on_record))
    except MedlensError:
        store.close()
        if not run_existed and not store.records():
            # Bad input met by the first request (a rejected API key): leave no run behind.
            shutil.rmtree(store.path, ignore_errors=True)
            if not out_existed and not any(options.out.iterdir()):
                options.out.rmdir()
        raise
    finally:
        store.close()
    results = build_results(store)
    store.write_results(results)
    return RunOutcome(store, results, done_before=len(done), ran=len(todo))


async def _execute(
    todo: list[Item],
    items: list[Item],
    model: Any,
    settings: RunSettings,
    probe: Any,
    options: RunOptions,
    on_record: Callable[[Record], None],
) -> None:
    if options.executor == "ray":
        from medlens.executors.ray import run_ray

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
    wrapped = with_cache(model) if options.cache else model
    try:
        await run_local(todo, wrapped, settings, on_record, probe)
    finally:
        await wrapped.aclose()
