"""httpx clients for many concurrent requests: one pool per 16 connections, least-busy first.

httpcore's pool assigns requests by scanning every connection for every queued request, so its
CPU cost grows with the square of the connection count: at 128 connections that scan costs more
than the request itself (profiled: ~10 ms CPU per request). Splitting the connections over
several small clients keeps each scan short. The caller still sees one object with ``post``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import httpx

CONNECTIONS_PER_CLIENT = 16


class ShardedClient:
    """``post`` through the least-busy of ``ceil(connections / 16)`` AsyncClients."""

    def __init__(
        self, connections: int, headers: Mapping[str, str], timeout: httpx.Timeout
    ) -> None:
        count = max(1, math.ceil(connections / CONNECTIONS_PER_CLIENT))
        per_client = math.ceil(connections / count)
        limits = httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client)
        self.clients = [
            httpx.AsyncClient(headers=dict(headers), timeout=timeout, limits=limits)
            for _ in range(count)
        ]
        self.busy = [0] * count

    async def post(self, url: str, content: bytes) -> httpx.Response:
        # In-flight requests never exceed the total connections (the runner bounds them), so the
        # least-busy client always has a free connection.
        index = min(range(len(self.clients)), key=self.busy.__getitem__)
        self.busy[index] += 1
        try:
            return await self.clients[index].post(url, content=content)
        finally:
            self.busy[index] -= 1

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()
