"""``--executor ray``: shard items over a Ray cluster; the driver alone writes the run store.

Each worker is a Ray actor that builds the backend itself from the model spec text (so a vLLM or
transformers model is loaded once per worker, on the worker's GPU) and runs shards through
:func:`medlens.execution.execute.run_local`, the same per-item code as a local run, with the run's
concurrency inside each worker. Finished shards stream back to the driver, which hands every
record to ``on_record``. A shard whose worker dies is re-queued on a fresh worker; resume is the
driver's business (it passes only the items still to do), so runs resume across executors.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import re
import socket
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ray
from ray.exceptions import RayActorError, RayTaskError

from medlens.core.errors import MedlensError, StopAfterInFlight
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.core.specs import Spec
from medlens.execution.execute import OnRecord, run_local
from medlens.execution.probes import Probe
from medlens.execution.requests import RunSettings

log = logging.getLogger(__name__)

OnAny = Callable[[Any], None]
WORKER_NAME_PREFIX = "medlens-worker"
# Items per shard: small enough that progress streams and a lost worker costs little, large
# enough that a worker keeps `concurrency` requests in flight.
MIN_SHARD, MAX_SHARD = 8, 256


class RayExecutorError(MedlensError):
    """The Ray cluster could not run the evaluation (unreachable, or workers keep dying)."""


class StoppableWorker:
    """What every kind of worker shares: a stop that lets a shard's requests in flight finish
    (the driver asks for it when its `on_record` stops; see :class:`ShardQueue`)."""

    stopping = False

    async def stop_after_in_flight(self) -> None:
        self.stopping = True

    async def answer_shard(self, answer: Callable[[OnAny], Awaitable[None]]) -> list[Any]:
        """What `answer` delivers until it ends, or stops after a stop was asked for."""
        delivered: list[Any] = []

        def collect(value: Any) -> None:
            delivered.append(value)
            if self.stopping:
                raise StopAfterInFlight("ray: the driver asked this worker to stop")

        with contextlib.suppress(StopAfterInFlight):
            await answer(collect)
        return delivered


@ray.remote
class ShardWorker(StoppableWorker):
    """One worker: its own backend, answering whole shards with the local runner."""

    def __init__(
        self, model_spec: Spec, items: list[Item], settings: RunSettings, cache_dir: str | None
    ) -> None:
        from medlens.extract.vocabulary import use_vocabulary
        from medlens.models import ModelContext, load_model

        use_vocabulary(settings.vocab)  # the driver's --vocab files, read in this worker
        context = ModelContext(items=items, seed=settings.seed, params=dict(settings.params))
        model = load_model(model_spec, context)
        if cache_dir is not None:
            os.environ["MEDLENS_CACHE"] = cache_dir  # the driver's cache, shared through WAL
            from medlens.execution.cache import with_cache

            model = with_cache(model)
        self.model = model
        self.settings = settings

    async def run_shard(self, shard: list[Item], probe: Probe | None) -> list[Record]:
        return await self.answer_shard(
            lambda collect: run_local(shard, self.model, self.settings, collect, probe)
        )

    async def close(self) -> None:
        await self.model.aclose()


@dataclass(frozen=True)
class Placement:
    """How many workers, and what each one reserves."""

    workers: int
    cpus: float
    gpus: float


def needs_gpu(spec: Spec) -> bool:
    """vLLM engines and transformers models placed on CUDA get one GPU per worker."""
    device = spec.option("device", "") or ""
    return spec.name == "vllm" or (spec.name == "hf" and device.startswith("cuda"))


def placement(model_spec: Spec, n_items: int, workers: int | None) -> Placement:
    resources = ray.cluster_resources()
    if needs_gpu(model_spec):
        available = int(resources.get("GPU", 0))
        if available < 1:
            raise RayExecutorError(
                f"ray: {str(model_spec).split('?')[0]} needs GPUs; the cluster has none"
            )
        return Placement(min(workers or available, available, n_items), 1.0, 1.0)
    available = max(1, int(resources.get("CPU", 1)))
    return Placement(max(1, min(workers or available, n_items)), 1.0, 0.0)


def shard_items(items: Sequence[Item], workers: int) -> list[list[Item]]:
    """Contiguous shards, about four per worker so that fast workers take more."""
    size = min(MAX_SHARD, max(MIN_SHARD, math.ceil(len(items) / (workers * 4))))
    return [list(items[start : start + size]) for start in range(0, len(items), size)]


def connect(address: str | None) -> bool:
    """Join `address`, or start a local cluster; True when this call started Ray."""
    if address:
        check_reachable(address)
    if ray.is_initialized():
        return False
    try:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            cpus = int(os.environ.get("MEDLENS_RAY_CPUS", "0")) or os.cpu_count() or 2
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise RayExecutorError(
            f"ray: cannot reach the cluster at {address or 'local'} ({exc})"
        ) from None
    return True


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail in seconds when nothing listens at a ``host:port`` address; Ray itself retries for
    minutes with no message. Other forms ("auto") are left to Ray."""
    found = re.fullmatch(r"(?:ray://)?\[?([^\[\]/]+?)\]?:(\d+)", address.strip())
    if found is None:
        return
    try:
        socket.create_connection((found.group(1), int(found.group(2))), timeout=timeout).close()
    except OSError as exc:
        raise RayExecutorError(f"ray: cannot reach the cluster at {address} ({exc})") from None


async def run_ray(
    todo: Sequence[Item],
    model_spec: Spec,
    settings: RunSettings,
    on_record: OnRecord,
    probe: Probe | None = None,
    *,
    items: Sequence[Item] | None = None,
    address: str | None = None,
    cache: bool = True,
    workers: int | None = None,
    max_restarts: int = 3,
) -> None:
    """Answer `todo` on a Ray cluster; `on_record` is called here, in the driver, per item.

    Args:
        model_spec: the model spec as the user gave it (workers build their own backend).
        items: every item of the benchmark (the model context; baselines read its gold).
        address: a running cluster (``ray://host:10001``, ``auto``); None starts a local one
            with ``$MEDLENS_RAY_CPUS`` (default: all) CPUs, shut down at the end.
        workers: number of actors (default: one per CPU, or per GPU for GPU backends).
        max_restarts: replacement workers allowed per original worker before giving up.
    """
    if not todo:
        return
    started = connect(address)
    try:
        cache_dir = _driver_cache_dir() if cache else None
        pool = WorkerPool(model_spec, list(items or todo), settings, cache_dir)
        where = placement(model_spec, len(todo), workers)
        await pool.drain(shard_items(todo, where.workers), where, probe, on_record, max_restarts)
    finally:
        if started:
            ray.shutdown()


def _driver_cache_dir() -> str:
    from medlens.execution.cache import cache_dir

    return str(cache_dir())


class WorkerPool:
    """Actors plus the shard queue: idle actors take the next shard; dead ones are replaced."""

    def __init__(
        self, model_spec: Spec, items: list[Item], settings: RunSettings, cache_dir: str | None
    ) -> None:
        self.model_spec = model_spec
        self.items_ref = ray.put(items)
        self.settings = settings
        self.cache_dir = cache_dir
        self.token = os.urandom(4).hex()
        self.spawned = 0

    def spawn(self, where: Placement) -> Any:
        self.spawned += 1
        name = f"{WORKER_NAME_PREFIX}-{self.token}-{self.spawned}"
        options = {"num_cpus": where.cpus, "num_gpus": where.gpus, "name": name}
        return ShardWorker.options(**options).remote(  # type: ignore[attr-defined]
            self.model_spec, self.items_ref, self.settings, self.cache_dir
        )

    async def drain(
        self,
        shards: list[list[Item]],
        where: Placement,
        probe: Probe | None,
        on_record: OnRecord,
        max_restarts: int,
    ) -> None:
        """Run every shard to completion, streaming records to `on_record` shard by shard; a
        stop it raises keeps what is in flight (see :class:`ShardQueue`)."""
        run = ShardQueue(self, shards, where, probe, max_restarts * where.workers)
        try:
            while run.running or (run.queue and not run.stopping):
                run.start_idle()
                done, _ = await asyncio.wait(run.running, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    run.settle(future, on_record)
        finally:
            for future in run.running:  # abandoned on error: retrieve so asyncio does not complain
                future.add_done_callback(lambda f: f.cancelled() or f.exception())
            await self._stop([*run.idle, *(actor for actor, _ in run.running.values())])
        if run.stopping:
            raise run.stopping[0]

    async def _stop(self, actors: list[Any]) -> None:
        for actor in actors:
            with contextlib.suppress(RayActorError, RayTaskError):
                await asyncio.wrap_future(actor.close.remote().future())
            ray.kill(actor)


class ShardQueue:
    """The shards of one :meth:`WorkerPool.drain`: idle actors take the next shard, a dead one
    is replaced (its shard re-queued). When `on_record` raises :class:`StopAfterInFlight`, no
    shard starts any more and each running worker is told to stop after its requests in
    flight; what they answered is still delivered, then the stop is raised."""

    def __init__(
        self,
        pool: WorkerPool,
        shards: list[list[Any]],
        where: Placement,
        probe: Probe | None,
        restarts: int,
    ) -> None:
        self.pool, self.where, self.probe, self.restarts_left = pool, where, probe, restarts
        self.queue = deque(shards)
        self.idle = [pool.spawn(where) for _ in range(where.workers)]
        self.running: dict[asyncio.Future[Any], tuple[Any, list[Any]]] = {}
        self.stopping: list[StopAfterInFlight] = []

    def start_idle(self) -> None:
        while self.idle and self.queue and not self.stopping:
            actor, shard = self.idle.pop(), self.queue.popleft()
            future = asyncio.wrap_future(actor.run_shard.remote(shard, self.probe).future())
            self.running[future] = (actor, shard)

    def settle(self, future: asyncio.Future[Any], on_record: Callable[[Any], None]) -> None:
        actor, shard = self.running.pop(future)
        try:
            records = future.result()
        except RayActorError as exc:
            self._replace(exc, shard)
            return
        except RayTaskError as exc:
            raise _cause(exc) from None
        for record in records:
            try:
                on_record(record)
            except StopAfterInFlight as exc:
                self._stop(exc)
        self.idle.append(actor)

    def _stop(self, exc: StopAfterInFlight) -> None:
        if not self.stopping:
            for actor, _ in self.running.values():
                actor.stop_after_in_flight.remote()
        self.stopping.append(exc)

    def _replace(self, exc: RayActorError, shard: list[Any]) -> None:
        if getattr(exc, "actor_init_failed", False):
            raise _init_failure(exc) from None  # would fail again on a new worker
        if self.stopping:
            return  # its answers are lost (killed in flight); a rerun sends them again
        if self.restarts_left <= 0:
            raise RayExecutorError(f"ray: workers keep dying ({exc})") from None
        self.restarts_left -= 1
        log.warning("ray: a worker died; its shard of %d items is re-queued", len(shard))
        self.queue.appendleft(shard)  # re-queued; the driver recorded nothing of it
        self.idle.append(self.pool.spawn(self.where))


def _init_failure(exc: RayActorError) -> BaseException:
    """Why a worker could not start: its constructor's exception (e.g. a SpecError) if known."""
    task_error = exc.args[0] if exc.args else None
    if isinstance(task_error, RayTaskError):
        return _cause(task_error)
    return RayExecutorError(f"ray: a worker could not start ({str(exc).splitlines()[0]})")


def _cause(exc: RayTaskError) -> BaseException:
    """The worker's own exception (a MedlensError stays one, so the CLI prints it in one line)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc
