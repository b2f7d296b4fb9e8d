"""``medlens judge --executor ray``: judge calls sharded over Ray with the answering executor's
pool (placement, shard sizes, dead-worker re-queueing); the driver alone writes the store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import ray

from medlens.core.specs import Spec
from medlens.execution.ray import (
    Placement,
    StoppableWorker,
    WorkerPool,
    _driver_cache_dir,
    connect,
    placement,
    shard_items,
)
from medlens.judges.runner import OnJudgement, run_judge_local
from medlens.judges.tasks import JudgeSettings, JudgeTask

if TYPE_CHECKING:
    from medlens.judges.options import JudgeOptions


@ray.remote
class JudgeWorker(StoppableWorker):
    """One worker: its own judge backend, judging whole shards with the local judge runner."""

    def __init__(
        self, judge_spec: Spec, settings: JudgeSettings, cache_dir: str | None, concurrency: int
    ) -> None:
        from medlens.judges.options import load_judge_model

        model = load_judge_model(judge_spec, [], concurrency, describe_only=False)
        if cache_dir is not None:
            os.environ["MEDLENS_CACHE"] = cache_dir  # the driver's cache, shared through WAL
            from medlens.execution.cache import with_cache

            model = with_cache(model)
        self.model = model
        self.settings = settings
        self.concurrency = concurrency

    async def run_shard(self, shard: list[JudgeTask], probe: Any) -> list[dict[str, Any]]:
        return await self.answer_shard(
            lambda collect: run_judge_local(
                shard, self.model, self.settings, collect, self.concurrency
            )
        )

    async def close(self) -> None:
        await self.model.aclose()


class JudgePool(WorkerPool):
    """The answering executor's pool, spawning judge workers instead of answer workers."""

    def __init__(
        self, judge_spec: Spec, settings: JudgeSettings, cache_dir: str | None, concurrency: int
    ) -> None:
        self.model_spec = judge_spec
        self.judge_settings = settings
        self.cache_dir = cache_dir
        self.concurrency = concurrency
        self.token = os.urandom(4).hex()
        self.spawned = 0

    def spawn(self, where: Placement) -> Any:
        self.spawned += 1
        name = f"medlens-judge-{self.token}-{self.spawned}"
        options = {"num_cpus": where.cpus, "num_gpus": where.gpus, "name": name}
        return JudgeWorker.options(**options).remote(  # type: ignore[attr-defined]
            self.model_spec, self.judge_settings, self.cache_dir, self.concurrency
        )


async def run_judge_ray(
    todo: Sequence[JudgeTask],
    judge_spec: Spec,
    settings: JudgeSettings,
    on_judgement: OnJudgement,
    options: JudgeOptions,
) -> None:
    """Judge `todo` on a Ray cluster; `on_judgement` is called here, in the driver."""
    started = connect(options.ray_address)
    try:
        cache_dir = _driver_cache_dir() if options.cache else None
        pool = JudgePool(judge_spec, settings, cache_dir, options.concurrency)
        where = placement(judge_spec, len(todo), None)
        shards: Any = shard_items(todo, where.workers)  # type: ignore[arg-type]
        await pool.drain(shards, where, None, on_judgement, max_restarts=3)
    finally:
        if started:
            ray.shutdown()
