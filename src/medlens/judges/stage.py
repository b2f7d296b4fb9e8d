"""`medlens judge`: a second stage over a finished run, from the run directory alone.

Everything that can fail on bad input (protocol, weights, judge spec, a changed spec under the
same name) fails in :func:`prepare_judge`, before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError, SpecError
from medlens.core.items import Item
from medlens.judges.options import (
    LOADS_WEIGHTS,
    JudgeOptions,
    default_judge_name,
    load_judge_model,
    validate,
)
from medlens.judges.protocols import load_protocol
from medlens.judges.store import JUDGE_SCHEMA, JudgeStore, check_resumable, judges_dir
from medlens.judges.tasks import (
    JudgeSettings,
    JudgeTask,
    answer_text,
    eligible,
    rule_judgement,
    settled_by_rules,
)
from medlens.models.base import Model
from medlens.runs.store import DeriveResults, RunStore


@dataclass
class PreparedJudge:
    options: JudgeOptions
    folder: Path
    spec: dict[str, Any]
    settings: JudgeSettings
    model: Model
    rule_lines: list[dict[str, Any]]
    tasks: list[JudgeTask]
    run: RunStore


@dataclass(frozen=True)
class JudgeOutcome:
    folder: Path
    done_before: int
    judged: int
    settled: int
    results: dict[str, Any] = field(default_factory=dict)
    """The run's rebuilt results.json, judges included."""


def prepare_judge(options: JudgeOptions) -> PreparedJudge:
    """Validate, load the run and the judge, and list the work; writes nothing."""
    validate(options)
    protocol = load_protocol(options.protocol, options.weights)
    run = RunStore.open(options.run_dir)
    items = run.items()
    records = run.records()
    kinds = protocol.kinds | ({"report"} if options.reports else set())
    settings = JudgeSettings(
        protocol=protocol,
        scope=options.scope or protocol.default_scope,
        repeats=options.repeats,
        images=options.images,
        with_question=options.with_question,
        kinds=frozenset(kinds),
    )
    # Only the spec is needed until there is something to judge: local engines (hf:, vllm:)
    # load their weights in _call_judge, so a refused or finished stage loads none.
    model = load_judge_model(options.judge, items, options.concurrency, describe_only=True)
    if options.repeats > 1 and model.deterministic and options.judge.name != "replay":
        raise SpecError(
            f"--repeats {options.repeats}: the judge {model.spec.split('?')[0]} answers "
            "deterministically, so repeats would agree by construction; sample it "
            "(e.g. temperature=0.7 without seed in an openai: spec)"
        )
    name = options.name or default_judge_name(options.judge)
    folder = judges_dir(options.run_dir) / name
    spec = {
        "schema": JUDGE_SCHEMA,
        "name": name,
        "judge": model.spec,
        "protocol": protocol.to_json(),
        "scope": settings.scope,
        "repeats": settings.repeats,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    check_resumable(folder, spec)
    rule_lines, tasks = plan(items, records, settings)
    return PreparedJudge(options, folder, spec, settings, model, rule_lines, tasks, run)


def plan(
    items: list[Item], records: dict[str, Any], settings: JudgeSettings
) -> tuple[list[dict[str, Any]], list[JudgeTask]]:
    """Lines the rules settle without a call, and the calls to make (every repeat)."""
    rule_lines: list[dict[str, Any]] = []
    tasks: list[JudgeTask] = []
    for item in items:
        record = records.get(item.id)
        if record is None or not eligible(item, record, settings):
            continue
        if settled_by_rules(item, record, settings):
            rule_lines.append(rule_judgement(item, record))
            continue
        answer = answer_text(record)
        tasks.extend(JudgeTask(item, answer, repeat) for repeat in range(settings.repeats))
    return rule_lines, tasks


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """The run directory's write lock (one writer per run: `medlens run` or `medlens judge`)."""
    from medlens.runs.lock import hold_run_lock

    with hold_run_lock(run_dir, "medlens judge"):
        yield


def judge_run(
    options: JudgeOptions,
    on_start: Callable[[int, int], None] | None = None,
    on_progress: Callable[[dict[str, Any]], None] | None = None,
    *,
    derive_results: DeriveResults,
) -> JudgeOutcome:
    """Run (or resume) a judge stage; rebuilds the run's results.json afterwards with
    `derive_results` (the analysis layer's ``build_results``, passed in by the caller)."""
    prepared = prepare_judge(options)
    with run_lock(options.run_dir):
        outcome = _execute_stage(prepared, on_start, on_progress)
    results = derive_results(prepared.run)  # the run's records were read once, in prepare
    prepared.run.write_results(results)
    return replace(outcome, results=results)


def _execute_stage(
    prepared: PreparedJudge,
    on_start: Callable[[int, int], None] | None,
    on_progress: Callable[[dict[str, Any]], None] | None,
) -> JudgeOutcome:
    existed = (prepared.folder / "judge.json").is_file()
    store = JudgeStore.open_or_create(prepared.folder, prepared.spec)
    try:
        done = store.done()
        todo = [t for t in prepared.tasks if (t.item.id, t.repeat) not in done]
        rules = [line for line in prepared.rule_lines if (line["id"], 0) not in done]
        for line in rules:
            store.append(line)
        if on_start:
            total = len(prepared.tasks) + len(prepared.rule_lines)
            on_start(total, total - len(todo))

        def on_judgement(line: dict[str, Any]) -> None:
            store.append(line)
            if on_progress:
                on_progress(line)

        if todo:
            _load_weights(prepared, todo)
            asyncio.run(_call_judge(todo, prepared, on_judgement))
        else:
            asyncio.run(prepared.model.aclose())
    except MedlensError:
        store.close()
        if not existed and not any(v.get("by") == "judge" for v in store.lines().values()):
            shutil.rmtree(prepared.folder, ignore_errors=True)  # a refused judge leaves nothing
            with contextlib.suppress(OSError):
                prepared.folder.parent.rmdir()
        raise
    finally:
        store.close()
    store.remember()
    return JudgeOutcome(prepared.folder, len(done), len(todo), len(rules))


def _load_weights(prepared: PreparedJudge, todo: list[JudgeTask]) -> None:
    """Replace the describe-only judge of a local engine by the loaded one, outside any event
    loop (as answering loads its model); Ray workers load their own."""
    options = prepared.options
    if options.executor == "ray" or options.judge.name not in LOADS_WEIGHTS:
        return
    asyncio.run(prepared.model.aclose())
    items = [task.item for task in todo]
    prepared.model = load_judge_model(
        options.judge, items, options.concurrency, describe_only=False
    )


async def _call_judge(
    todo: list[JudgeTask], prepared: PreparedJudge, on_judgement: Callable[[dict[str, Any]], None]
) -> None:
    options = prepared.options
    if options.executor == "ray":
        from medlens.judges.ray_judge import run_judge_ray

        await prepared.model.aclose()  # the driver's backend only named the spec
        await run_judge_ray(todo, options.judge, prepared.settings, on_judgement, options)
        return
    from medlens.execution.cache import with_cache
    from medlens.judges.runner import run_judge_local

    model = with_cache(prepared.model) if options.cache else prepared.model
    try:
        await run_judge_local(todo, model, prepared.settings, on_judgement, options.concurrency)
    finally:
        await model.aclose()
