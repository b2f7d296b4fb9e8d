"""Response cache: SQLite (WAL) keyed by the request fingerprint and who answers, wrapping any
model.

The key is the request fingerprint joined with the backend's ``cache_identity`` (the endpoint of
an ``openai:`` server, the weights hash of ``hf:``/``vllm:``): the run spec leaves the endpoint
out so that a moved server resumes its run, but the cache must not answer for another server.
For servers (backends whose answers name the served model), a process's cache hits are checked
live before the cache answers (``cache_check``: the server's ``/v1/models`` entry, then the first
21 hits asked live and compared); how is recorded in ``run.json["cache_checks"]``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.cache_location import cache_dir
from medlens.execution.cache_check import (
    LIVE_CHECKS,
    UNREACHABLE,
    LiveCheck,
    answer_differences,
    cache_check_line,
    entry_differences,
)
from medlens.models.base import Model, Request, Response
from medlens.models.endpoint_breaker import EndpointUnreachableError

BUSY_TIMEOUT_S = 30.0


class ResponseCache:
    """Fingerprint → response text, usage and option probabilities (never secrets or images)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_S
        )
        self._setup()

    def _setup(self) -> None:
        """WAL mode and the table, retried: several processes (Ray workers) may open the cache at
        once, and switching the journal mode takes a lock that SQLite's busy timeout does not
        wait for."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute(
                    "CREATE TABLE IF NOT EXISTS responses "
                    "(fingerprint TEXT PRIMARY KEY, value TEXT NOT NULL)"
                )
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def get(self, fingerprint: str) -> Response | None:
        """The stored answer (``cached=True``), or None."""
        row = self._db.execute(
            "SELECT value FROM responses WHERE fingerprint = ?", (fingerprint,)
        ).fetchone()
        if row is None:
            return None
        value = json.loads(row[0])
        return Response(
            text=value["text"],
            usage=value.get("usage") or {},
            option_probs=value.get("option_probs"),
            cached=True,
            served_model=value.get("served_model"),
            system_fingerprint=value.get("system_fingerprint"),
            finish_reason=value.get("finish_reason"),
            cache_key=fingerprint,
            listed_model=value.get("listed_model"),
        )

    def put(
        self, fingerprint: str, response: Response, listed: Mapping[str, Any] | None = None
    ) -> None:
        """Store an answer; `listed`: the server's ``/v1/models`` entry it was made under."""
        value = {
            "text": response.text,
            "usage": dict(response.usage),
            "option_probs": dict(response.option_probs) if response.option_probs else None,
            "finish_reason": response.finish_reason,
            "served_model": response.served_model,
            "system_fingerprint": response.system_fingerprint,
        }
        if listed:
            value["listed_model"] = dict(listed)
        if response.finish_reason is not None:
            value["finish_reason"] = response.finish_reason
        self._db.execute(
            "INSERT OR REPLACE INTO responses (fingerprint, value) VALUES (?, ?)",
            (fingerprint, json.dumps(value, ensure_ascii=False)),
        )

    def delete(self, fingerprint: str) -> None:
        self._db.execute("DELETE FROM responses WHERE fingerprint = ?", (fingerprint,))

    def close(self) -> None:
        self._db.close()


def cache_key(fingerprint: str, identity: str) -> str:
    """The entry of one request to one answerer: the fingerprint alone when the backend names
    no identity (entries written before identities existed stay readable for those)."""
    if not identity:
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\n{identity}".encode()).hexdigest()


class CachingModel:
    """A transparent wrapper: deterministic requests are answered from the cache when possible.

    For a server (``reports_served_model``) the cache answers only once a live check trusts it
    (``cache_check``): the server's ``/v1/models`` entry is compared with the one each entry was
    written under, and the first `checks` hits are asked live and compared with their stored
    answers; until they all agreed, hits are asked live (or wait for the verdict). A difference
    sets :attr:`mismatch` and every request of the process is asked live and stored anew; a
    server that does not answer a check leaves the cache answering, unchecked.
    """

    def __init__(self, model: Model, cache: ResponseCache, checks: int = LIVE_CHECKS) -> None:
        self.model = model
        self.cache = cache
        self.spec = model.spec
        self.deterministic = model.deterministic
        self.identity = str(getattr(model, "cache_identity", "") or "")
        self.hits = 0
        self.discarded = 0
        """Cache hits thrown away because the server now answers otherwise."""
        self.check: LiveCheck | None = (
            LiveCheck(checks) if getattr(model, "reports_served_model", False) else None
        )
        self._live_served: str | None = None
        self._listed: dict[str, Any] | None = None
        self._listing: asyncio.Task[dict[str, Any] | None] | None = None

    def __getattr__(self, name: str) -> Any:
        """Anything else (``max_tokens``, ``honours_sampling`` …) is the wrapped backend's."""
        if name == "model":  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)

    @property
    def mismatch(self) -> dict[str, Any] | None:
        """The check's record when it found the server changed; None: not (or not checked)."""
        entry = self.check_entry
        return entry if entry and entry["result"] == "mismatch" else None

    @property
    def check_entry(self) -> dict[str, Any] | None:
        """How this process checked the cache (``run.json["cache_checks"]``); None when it had
        nothing to check (no hit, or a backend whose identity is its weights)."""
        check = self.check
        if check is None or (check.started == 0 and check.verdict != "mismatch" and not self.hits):
            return None
        return check.entry(self.identity, self.hits)

    async def generate(self, request: Request) -> Response:
        key = cache_key(request.fingerprint, self.identity)
        cached = self.cache.get(key)
        if cached is None:
            return await self._live(request, key)
        check = self.check
        if check is not None:
            changed = entry_differences(cached.listed_model, await self._listed_now())
            if changed:
                check.disagree(changed)
            if check.take_turn():
                return await self._checked(request, key, cached, check)
            await check.decided.wait()
            if check.verdict == "mismatch" or not self._same_served(cached):
                self.discarded += 1  # another model behind the same name and endpoint
                return await self._live(request, key)
        self.hits += 1
        return cached

    def _same_served(self, cached: Response) -> bool:
        served = self._live_served
        return served is None or cached.served_model in (None, served)

    async def _listed_now(self) -> dict[str, Any] | None:
        """The server's ``/v1/models`` entry of the model, asked once per process."""
        lister = getattr(self.model, "listed_model", None)
        if lister is None:
            return None
        if self._listing is None:
            self._listing = asyncio.ensure_future(lister())
        self._listed = await self._listing
        return self._listed

    async def _checked(
        self, request: Request, key: str, cached: Response, check: LiveCheck
    ) -> Response:
        """One check: ask live, compare; a server that cannot be reached leaves the cache
        answering (unchecked), any other failure hands the turn to another hit."""
        try:
            response = await self.model.generate(request)
        except EndpointUnreachableError as exc:
            check.unreachable(str(exc))
            self.hits += 1
            return cached
        if response.error is not None or response.text is None:
            if response.error is not None and response.error.type in UNREACHABLE:
                check.unreachable(f"{response.error.type}: {response.error.message}")
            else:
                check.give_back()
            self.hits += 1
            return cached
        self._live_served = self._live_served or response.served_model
        differences = answer_differences(cached, response)
        if differences:
            check.disagree(differences)
        else:
            check.agree()
        self.cache.put(key, response, self._listed)
        return dataclasses.replace(response, cache_key=key)

    async def _live(self, request: Request, key: str) -> Response:
        response = await self.model.generate(request)
        if response.error is not None or response.text is None:
            return response
        listed = await self._listed_now() if self.check is not None else None
        self.cache.put(key, response, listed)
        return dataclasses.replace(response, cache_key=key)

    def forget(self, key: str | None) -> None:
        """Drop the entry of an answer its reader could not use (a judge reply without a
        verdict): a failure is never served again as if it were the answer."""
        if key:
            self.cache.delete(key)

    async def aclose(self) -> None:
        if self._listing is not None and not self._listing.done():
            self._listing.cancel()
        await self.model.aclose()
        self.cache.close()


def cache_mismatch_line(mismatch: dict[str, Any]) -> str:
    """The one line a run or judge stage prints when its server no longer answers as cached."""
    return cache_check_line({**mismatch, "result": "mismatch"}) or ""


def with_cache(model: Model, checks: int | None = None) -> Model:
    """Wrap `model` in the response cache when its answers are reproducible and worth storing;
    a server's hits are checked by `checks` live asks (``cache_check``; 0: trusted unasked;
    None: LIVE_CHECKS)."""
    if not model.deterministic or not getattr(model, "worth_caching", True):
        return model
    cache = ResponseCache(cache_dir() / "responses.sqlite")
    return CachingModel(model, cache, LIVE_CHECKS if checks is None else checks)


@dataclass
class CacheChecks:
    """Where a process's live check of the response cache goes: ``run.json["cache_checks"]``
    (rewritten atomically), and one line when the server changed or could not be asked."""

    store: Any
    """The run's ``RunStore`` (its ``run`` dict and folder)."""
    note: Callable[[str], None]

    def record(self, entry: dict[str, Any] | None) -> None:
        if not entry:
            return
        line = cache_check_line(entry)
        if line:
            self.note(line)
        self.store.run.setdefault("cache_checks", []).append(entry)
        self.store.save_run()
