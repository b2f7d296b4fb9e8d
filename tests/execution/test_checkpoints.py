"""Records waiting for their batch are written during a pause in the answers, not only at the
next append: `with_checkpoints` flushes the run's records every quarter second while it runs."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from medlens.execution.evaluate import with_checkpoints
from medlens.runs.files import JsonLines


def test_records_of_a_burst_are_written_while_the_next_answer_is_awaited(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    log = JsonLines(path, batch=256, interval=3600)  # appends alone would never write these
    seen: list[int] = []

    async def burst_then_pause() -> None:
        for n in range(3):
            log.append({"id": str(n)})
        deadline = time.monotonic() + 60  # the pause: a slow answer, a retry back-off
        while time.monotonic() < deadline:
            if path.is_file() and path.read_bytes().count(b"\n") == 3:
                seen.append(3)
                return
            await asyncio.sleep(0.01)

    asyncio.run(with_checkpoints(burst_then_pause(), log.flush, 0.01))
    assert seen == [3]
    assert [line.value["id"] for line in log.read().lines] == ["0", "1", "2"]
    log.close()


def test_the_checkpoints_stop_with_the_work() -> None:
    flushes: list[int] = []

    async def work() -> None:
        await asyncio.sleep(0)

    async def main() -> tuple[int, int]:
        await with_checkpoints(work(), lambda: flushes.append(1), 0.001)
        after = len(flushes)
        await asyncio.sleep(0.05)
        return after, len(flushes)

    after, later = asyncio.run(main())
    assert later == after  # the ticker was cancelled with the work
