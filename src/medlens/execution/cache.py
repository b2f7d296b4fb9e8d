"""Response cache: SQLite (WAL) keyed by the request fingerprint, wrapping any model."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

from medlens.models.base import Model, Request, Response


def cache_dir() -> Path:
    """$MEDLENS_CACHE, else the user cache directory."""
    configured = os.environ.get("MEDLENS_CACHE")
    if configured:
        return Path(configured)
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("medlens"))


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
        self._db.execute(
            "INSERT OR REPLACE INTO responses (fingerprint, value) VALUES (?, ?)",
            (fingerprint, json.dumps(value, ensure_ascii=False)),
        )

    def close(self) -> None:
        self._db.close()


class CachingModel:
    """A transparent wrapper: deterministic requests are answered from the cache when possible."""

    def __init__(self, model: Model, cache: ResponseCache) -> None:
        self.model = model
        self.cache = cache
        self.spec = model.spec
        self.deterministic = model.deterministic
        self.hits = 0

    async def generate(self, request: Request) -> Response:
        cached = self.cache.get(request.fingerprint)
        if cached is not None:
            self.hits += 1
            return cached
        response = await self.model.generate(request)
        if response.error is None and response.text is not None:
            self.cache.put(request.fingerprint, response)
        return response

    async def aclose(self) -> None:
        await self.model.aclose()
        self.cache.close()


def with_cache(model: Model) -> Model:
    """Wrap `model` in the response cache when its answers are reproducible and worth storing."""
    if not model.deterministic or not getattr(model, "worth_caching", True):
        return model
    return CachingModel(model, ResponseCache(cache_dir() / "responses.sqlite"))
