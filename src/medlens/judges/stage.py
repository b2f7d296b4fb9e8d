"""`medlens judge`: a second stage over a finished run, from the run directory alone.

Everything that can fail on bad input (protocol, weights, judge spec, a changed spec under the
same name, self-judging, ``--swap`` without options) fails in :func:`plan.prepare_judge`, before
anything is written. A panel's members judge at the same time, each into its own store; the
panel's combined lines are written after them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sys
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError, StopAfterInFlight
from medlens.judges.combine import protocol_kind
from medlens.judges.identity import served_counts, served_switch_line
from medlens.judges.options import LOADS_WEIGHTS, JudgeOptions, load_judge_model
from medlens.judges.panel import write_panel_lines
from medlens.judges.plan import JudgePlan, PreparedJudge, prepare_judge
from medlens.judges.tasks import JudgeTask
from medlens.runs.judgements import JudgeStore, read_judge_json, write_judge_json
from medlens.runs.layout import is_judge_stage, members_dir
from medlens.runs.view import RunView

OnStart = Callable[[int, int], None]
OnProgress = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class JudgeOutcome:
    folder: Path
    done_before: int
    judged: int
    settled: int
    run: RunView
    """The judged run as the stage read it (its items and records are not read again)."""


@contextlib.contextmanager
def judge_lock(run_dir: Path, name: str) -> Iterator[None]:
    """What a judge stage holds while it writes: the run's records read-only (no `medlens run`
    writes meanwhile) and its own store exclusive; other stages of the run judge side by side."""
    from medlens.runs.lock import hold_judge_lock

    with hold_judge_lock(run_dir, name, "medlens judge"):
        yield


def judge_run(
    options: JudgeOptions,
    on_start: OnStart | None = None,
    on_progress: OnProgress | None = None,
) -> JudgeOutcome:
    """Run (or resume) a judge stage or panel. The run's results, which now read its lines,
    are derived by whoever asks for them once the stage's locks are released
    (``analysis.artifacts``: the last stage of a run to finish saves them)."""
    plan = prepare_judge(options)
    with judge_lock(options.run_dir, plan.folder.name):
        outcome = _execute_plan(plan, on_start, on_progress)
    return outcome


@dataclass
class _Open:
    """A stage whose store is open: its calls still to make."""

    stage: PreparedJudge
    store: JudgeStore
    existed: bool
    todo: list[JudgeTask]
    done: int
    rules: int


def _execute_plan(
    plan: JudgePlan, on_start: OnStart | None, on_progress: OnProgress | None
) -> JudgeOutcome:
    panel_existed = plan.panel_spec is not None and is_judge_stage(plan.folder)
    if plan.panel_spec is not None and not panel_existed:
        write_judge_json(plan.folder, plan.panel_spec)
    opened: list[_Open] = []
    try:
        opened = [_open_stage(stage) for stage in plan.stages]
        if on_start:
            total = sum(len(o.stage.tasks) + len(o.stage.rule_lines) for o in opened)
            on_start(total, total - sum(len(o.todo) for o in opened))
        _judge_all(opened, on_progress)
    except MedlensError:
        _remove_unjudged(plan, opened, panel_existed)
        raise
    finally:
        for o in opened:
            o.store.close()
    for o in opened:
        _record_identity(o.store, plan)
        _record_cache_checks(o.store, o.stage.cache_checks)
    if plan.panel_spec is not None:
        _finish_panel(plan, [o.store for o in opened])
    else:
        opened[0].store.remember()
    return JudgeOutcome(
        plan.folder,
        sum(o.done for o in opened),
        sum(len(o.todo) for o in opened),
        sum(o.rules for o in opened),
        plan.run,
    )


def _open_stage(stage: PreparedJudge) -> _Open:
    existed = is_judge_stage(stage.folder)
    store = JudgeStore.open_or_create(stage.folder, stage.spec)
    done = store.done(retry_failures=stage.options.retry_errors)
    todo = [t for t in stage.tasks if (t.item.id, t.repeat) not in done]
    rules = [line for line in stage.rule_lines if (line["id"], 0) not in done]
    for line in rules:
        store.append(line)
    return _Open(stage, store, existed, todo, len(done), len(rules))


def _judge_all(opened: list[_Open], on_progress: OnProgress | None) -> None:
    """Every stage's calls; a panel's members at the same time (Ray: one after another)."""
    busy = [o for o in opened if o.todo]
    for o in opened:
        if not o.todo:
            asyncio.run(o.stage.model.aclose())
        else:
            _load_weights(o.stage, o.todo)
    recorders = Recorders(on_progress)
    if any(o.stage.options.executor == "ray" for o in busy):
        for o in busy:
            asyncio.run(_call_judge(o.todo, o.stage, recorders.of(o.store)))
        return
    if busy:
        asyncio.run(together(_call_judge(o.todo, o.stage, recorders.of(o.store)) for o in busy))


class Recorders:
    """Each stage's judgement callback: store the line, then report it; a stop one of them
    reports (a study's budget) stops every member of a panel after its calls in flight."""

    def __init__(self, on_progress: OnProgress | None) -> None:
        self.on_progress = on_progress
        self.stopping: list[StopAfterInFlight] = []

    def of(self, store: JudgeStore) -> OnProgress:
        def on_judgement(line: dict[str, Any]) -> None:
            store.append(line)
            try:
                if self.on_progress:
                    self.on_progress(line)  # the drained lines are reported (and billed) too
            except StopAfterInFlight as exc:
                self.stopping.append(exc)
            if self.stopping:
                raise self.stopping[0]

        return on_judgement


async def together(calls: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Await `calls` side by side; when one stops after its calls in flight, the others (told
    by their :class:`Recorders`) are awaited while they store theirs, then the stop is raised.
    Any other error stops at once."""
    tasks = [asyncio.ensure_future(call) for call in calls]
    try:
        await asyncio.gather(*tasks)
    except StopAfterInFlight:
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _remove_unjudged(plan: JudgePlan, opened: list[_Open], panel_existed: bool) -> None:
    """A refused judge leaves nothing: new folders without a single judged line go."""
    for o in opened:
        o.store.close()
        judged = any(v.get("by") == "judge" for v in o.store.lines().values())
        if not o.existed and not judged:
            shutil.rmtree(o.stage.folder, ignore_errors=True)
    if plan.panel_spec is not None and not panel_existed:
        members = members_dir(plan.folder)
        if not members.is_dir() or not any(members.iterdir()):
            shutil.rmtree(plan.folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        plan.folder.parent.rmdir()  # judges/ itself, when this made it and nothing is left


def _record_identity(store: JudgeStore, plan: JudgePlan) -> None:
    """Fill the fingerprint with what the replies said (served model, system fingerprint), and
    say why the stage is self-judged when ``--allow-self-judge`` let it be."""
    models, systems = served_counts(store.lines().values())
    reasons = list(plan.self_judged)
    reasons += [
        f"the judge server answered as {model!r}, the model this run evaluates"
        for model in models
        if model.lower() in plan.evaluated
    ]
    _stamp(store, models, systems, reasons)


def _record_cache_checks(store: JudgeStore, checks: list[dict[str, Any]]) -> None:
    """A failed live check of the cache: one line on stderr, kept in judge.json."""
    from medlens.execution.cache import cache_mismatch_line

    for check in checks:
        sys.stderr.write(cache_mismatch_line(check) + "\n")
    if checks:
        store.update_spec({"cache_checks": [*(store.spec.get("cache_checks") or []), *checks]})


def _stamp(
    store: JudgeStore, models: dict[str, int], systems: dict[str, int], reasons: list[str]
) -> None:
    """Rewrite judge.json with the served fields (and self-judged reasons) when they changed."""
    fingerprint = {
        **(store.spec.get("judge_fingerprint") or {}),
        "served_models": models,
        "system_fingerprints": systems,
    }
    changes: dict[str, Any] = {"judge_fingerprint": fingerprint}
    if reasons:
        changes["self_judged"] = reasons
    switched = served_switch_line(str(store.spec.get("name") or store.folder.name), fingerprint)
    if switched:
        sys.stderr.write(f"warning: {switched}\n")
    if any(store.spec.get(k) != v for k, v in changes.items()):
        store.update_spec(changes)


def _finish_panel(plan: JudgePlan, stores: list[JudgeStore]) -> None:
    """The panel's lines from its members', and its fingerprint from theirs."""
    panel = JudgeStore(plan.folder, read_judge_json(plan.folder))
    models, systems = served_counts(line for store in stores for line in store.lines().values())
    reasons: list[str] = []
    for store in stores:
        reasons += [r for r in store.spec.get("self_judged") or [] if r not in reasons]
    _stamp(panel, models, systems, reasons)
    write_panel_lines(plan.folder, protocol_kind(panel.spec))


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _load_weights(stage: PreparedJudge, todo: list[JudgeTask]) -> None:
    """Replace the describe-only judge of a local engine by the loaded one, outside any event
    loop (as answering loads its model); Ray workers load their own."""
    options = stage.options
    if options.executor == "ray" or options.judge.name not in LOADS_WEIGHTS:
        return
    asyncio.run(stage.model.aclose())
    items = [task.item for task in todo]
    stage.model = load_judge_model(options.judge, items, options.concurrency, describe_only=False)


async def _call_judge(
    todo: list[JudgeTask], stage: PreparedJudge, on_judgement: OnProgress
) -> None:
    options = stage.options
    if options.executor == "ray":
        from medlens.judges.ray_judge import run_judge_ray

        await stage.model.aclose()  # the driver's backend only named the spec
        await run_judge_ray(todo, options.judge, stage.settings, on_judgement, options)
        return
    from medlens.execution.cache import with_cache
    from medlens.judges.runner import run_judge_local

    model = with_cache(stage.model) if options.cache else stage.model
    try:
        await run_judge_local(todo, model, stage.settings, on_judgement, options.concurrency)
    finally:
        mismatch = getattr(model, "mismatch", None)
        stage.cache_checks.extend([mismatch] if mismatch else [])
        await model.aclose()
