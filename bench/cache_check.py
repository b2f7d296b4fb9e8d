"""How often the response cache's live check tells a different model behind the old name and
URL (``execution/cache_check.py``), simulated with the real ``CachingModel`` over an in-memory
cache: the old model's answers fill the cache, then a new model answers — letters agreeing with
the old ones on a share ``a`` of the items — and the run asks every item (checks spread as
``evaluate`` spreads them). Detected = the check found a difference (every item then asked live).

    .venv/bin/python bench/cache_check.py [TRIALS]

Beside each rate: the closed form ``1 - a**K`` (independent items) for K checks.
"""

from __future__ import annotations

import asyncio
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from medlens.core.items import Item
from medlens.execution.cache import CachingModel, ResponseCache
from medlens.execution.cache_check import LIVE_CHECKS
from medlens.execution.dispatch import spread_first
from medlens.execution.requests import RunSettings, build_request
from medlens.models.base import Request, Response

ITEMS = 100
LETTERS = "ABCD"


@dataclass
class LetterServer:
    """A server answering a fixed letter per item id."""

    answers: dict[str, str]
    spec: str = "openai:m"
    deterministic: bool = True
    cache_identity: str = "endpoint=http://127.0.0.1:8000/v1"
    reports_served_model: bool = True
    asked: list[str] = field(default_factory=list)

    async def generate(self, request: Request) -> Response:
        self.asked.append(request.item.id)
        return Response(self.answers[request.item.id], served_model="m")

    async def aclose(self) -> None:
        return None


def scenario(agreement: float, draw: random.Random) -> tuple[dict[str, str], dict[str, str]]:
    """Old and new answers: the new one agrees on each item with probability `agreement`."""
    old = {f"q{i}": draw.choice(LETTERS) for i in range(ITEMS)}
    new = {
        key: letter if draw.random() < agreement else draw.choice(LETTERS.replace(letter, ""))
        for key, letter in old.items()
    }
    return old, new


ALL_ITEMS = [Item(id=f"q{i}", question=f"q{i}", kind="choice",
                  options={x: x for x in LETTERS}, answer="A") for i in range(ITEMS)]  # fmt: skip
ALL_REQUESTS = {it.id: build_request(it, "openai:m", RunSettings(), None) for it in ALL_ITEMS}


def detected(agreement: float, checks: int, draw: random.Random) -> bool:
    old, new = scenario(agreement, draw)
    items = list(ALL_ITEMS)
    draw.shuffle(items)  # the benchmark's order has nothing to do with which items differ
    requests = [ALL_REQUESTS[it.id] for it in items]
    cache = ResponseCache(Path(":memory:"))

    async def run(model: LetterServer, order: list[Request], k: int) -> CachingModel:
        wrapped = CachingModel(model, cache, k)
        await asyncio.gather(*(wrapped.generate(r) for r in order))
        return wrapped

    asyncio.run(run(LetterServer(old), requests, checks))
    order = [ALL_REQUESTS[it.id] for it in spread_first(items, checks)]
    wrapped = asyncio.run(run(LetterServer(new), order, checks))
    return wrapped.mismatch is not None


def main() -> None:
    trials = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    cases = [("random letters (another model, chance agreement)", 0.25),
             ("another model, both 60% right on 4 options", 0.6**2 + 0.4**2 / 3),
             ("sibling checkpoint agreeing on 80%", 0.8),
             ("sibling checkpoint agreeing on 90%", 0.9)]  # fmt: skip
    draw = random.Random(0)
    print(f"{ITEMS} cached items, {trials} simulated trials per cell; detection rate (closed form)")
    for checks in (1, 5, 10, LIVE_CHECKS, 30):
        cells = []
        for _, agreement in cases:
            rate = sum(detected(agreement, checks, draw) for _ in range(trials)) / trials
            cells.append(f"{rate:6.1%} ({1 - agreement**checks:6.1%})")
        label = f"K={checks:2d}" + (" (default)" if checks == LIVE_CHECKS else "          ")
        print(label + "  " + "  ".join(cells))
    for name, agreement in cases:
        print(f"  column: {name} (agreement {agreement:.3f})")


if __name__ == "__main__":
    main()
