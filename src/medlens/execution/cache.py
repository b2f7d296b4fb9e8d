"""Response cache: SQLite (WAL) keyed by the request fingerprint and who answers, wrapping any
model.

The key is the request fingerprint joined with the backend's ``cache_identity`` (the endpoint of
an ``openai:`` server, the weights hash of ``hf:``/``vllm:``): the run spec leaves the endpoint
out so that a moved server resumes its run, but the cache must not answer for another server.
For servers (backends whose answers name the served model), the first cache hit of a process is
asked live once and the live answer compared with the stored one (text, served model, system
fingerprint): any difference discards that endpoint's entries for the process, and the run
records it (``run.json["cache_checks"]``); a stored answer whose ``served_model`` differs from
the live one is discarded too.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.cache_location import cache_dir
from medlens.models.base import Model, Request, Response

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
        )

    def put(self, fingerprint: str, response: Response) -> None:
        value = {
            "text": response.text,
            "usage": dict(response.usage),
            "option_probs": dict(response.option_probs) if response.option_probs else None,
            "finish_reason": response.finish_reason,
            "served_model": response.served_model,
            "system_fingerprint": response.system_fingerprint,
        }
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

    For a server (``reports_served_model``), the first cache hit of a process is asked live
    and the live *answer* compared with the stored one, with the served model and system
    fingerprint when both report them: a new checkpoint served under the old name at the old
    URL answers differently. A mismatch sets :attr:`mismatch` and no entry of this endpoint
    answers for the rest of the process (every request is asked live and stored anew).
    """

    def __init__(self, model: Model, cache: ResponseCache) -> None:
        self.model = model
        self.cache = cache
        self.spec = model.spec
        self.deterministic = model.deterministic
        self.identity = str(getattr(model, "cache_identity", "") or "")
        self.hits = 0
        self.discarded = 0
        """Cache hits thrown away because the server now answers otherwise."""
        self.mismatch: dict[str, Any] | None = None
        """What the live check found different (``cache_check_entry``); None: trusted."""
        self._checked = not getattr(model, "reports_served_model", False)
        self._live_served: str | None = None
        self._checking: asyncio.Lock | None = None

    def __getattr__(self, name: str) -> Any:
        """Anything else (``max_tokens``, ``honours_sampling`` …) is the wrapped backend's."""
        if name == "model":  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.model, name)

    async def generate(self, request: Request) -> Response:
        key = cache_key(request.fingerprint, self.identity)
        cached = self.cache.get(key)
        if cached is not None and not self._checked:
            self._checking = self._checking or asyncio.Lock()
            async with self._checking:
                if not self._checked:
                    return await self._first_check(request, key, cached)
        if cached is not None:
            served = self._live_served
            if self.mismatch is None and (served is None or cached.served_model in (None, served)):
                self.hits += 1
                return cached
            self.discarded += 1  # answered by another model behind the same name and endpoint
        return await self._live(request, key)

    async def _first_check(self, request: Request, key: str, cached: Response) -> Response:
        """Ask the server once before trusting the cache; unreachable → the cache answers."""
        response = await self.model.generate(request)
        self._checked = True
        if response.error is not None or response.text is None:
            self.hits += 1  # nothing to compare with: the stored answers stand
            return cached
        self._live_served = response.served_model
        differences = answer_differences(cached, response)
        if differences:
            self.mismatch = cache_check_entry(self.identity, differences)
        self.cache.put(key, response)
        return dataclasses.replace(response, cache_key=key)

    async def _live(self, request: Request, key: str) -> Response:
        response = await self.model.generate(request)
        if response.error is not None or response.text is None:
            return response
        self.cache.put(key, response)
        return dataclasses.replace(response, cache_key=key)

    def forget(self, key: str | None) -> None:
        """Drop the entry of an answer its reader could not use (a judge reply without a
        verdict): a failure is never served again as if it were the answer."""
        if key:
            self.cache.delete(key)

    async def aclose(self) -> None:
        await self.model.aclose()
        self.cache.close()


def answer_differences(cached: Response, live: Response) -> list[str]:
    """What differs between a stored answer and the live one to the same deterministic
    request: the text, and the served model / system fingerprint when both name one."""
    found = []
    for field_name, words in (("served_model", "served model"),
                               ("system_fingerprint", "system fingerprint")):  # fmt: skip
        old, new = getattr(cached, field_name), getattr(live, field_name)
        if old is not None and new is not None and old != new:
            found.append(f"{words} {old} → {new}")
    if cached.text != live.text:
        found.append("the answer to a deterministic request differs")
    return found


def cache_check_entry(identity: str, differences: list[str]) -> dict[str, Any]:
    """The ``run.json["cache_checks"]`` entry of a failed live check."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"checked": stamp, "identity": identity, "result": "mismatch",
            "differences": differences}  # fmt: skip


def cache_mismatch_line(mismatch: dict[str, Any]) -> str:
    """The one line a run or judge stage prints when its server no longer answers as cached."""
    where = str(mismatch.get("identity") or "the server").removeprefix("endpoint=")
    return (
        f"warning: {where} no longer answers as its cached answers did "
        f"({'; '.join(mismatch['differences'])}): its cache entries are not used for this run"
    )


def with_cache(model: Model) -> Model:
    """Wrap `model` in the response cache when its answers are reproducible and worth storing."""
    if not model.deterministic or not getattr(model, "worth_caching", True):
        return model
    return CachingModel(model, ResponseCache(cache_dir() / "responses.sqlite"))


@dataclass
class CacheChecks:
    """Where a failed live check of the response cache goes: one line, and
    ``run.json["cache_checks"]`` (rewritten atomically)."""

    store: Any
    """The run's ``RunStore`` (its ``run`` dict and folder)."""
    note: Callable[[str], None]

    def record(self, mismatch: dict[str, Any] | None) -> None:
        if not mismatch:
            return
        self.note(cache_mismatch_line(mismatch))
        self.store.run.setdefault("cache_checks", []).append(mismatch)
        self.store.save_run()
