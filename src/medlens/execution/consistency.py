"""Self-consistency: K sampled answers per item, each extracted, the majority scored.

Each draw is its own request (temperature `strategies.SELF_CONSISTENCY_TEMPERATURE`, seed
``run seed × 1000 + k``), so it has its own fingerprint and cache entry. Draws of one item run one
after another: the run's concurrency bounds items, and K draws in parallel would multiply it.
The record is the majority draw's record plus ``samples`` (seed, output, answer, status of
every draw), ``votes`` (answer → count) and ``agreement`` (majority share); usage and latency
add up over the draws. One failed draw fails the item (retried on resume, draws then come
from the cache).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.execution.replies import make_record, timed_generate
from medlens.execution.requests import fingerprint
from medlens.execution.strategies import majority_vote, sample_params
from medlens.extract.normalise import normalize_answer
from medlens.models.base import Model, Request, Response

if TYPE_CHECKING:
    from medlens.execution.requests import RunSettings

FREE_TEXT_KINDS = ("open", "classify", "report")


async def answer_by_vote(
    item: Item, request: Request, model: Model, settings: RunSettings
) -> Record:
    """Draw `settings.strategy.samples` answers for `item` and keep the majority's record."""

    draws: list[tuple[Request, tuple[Response, float]]] = []
    for index in range(settings.strategy.samples):
        params = sample_params(request.params, settings.seed, index)
        sampled = Request(
            item, request.messages, params, fingerprint(model.spec, request.messages, params)
        )
        draws.append((sampled, await timed_generate(model, sampled)))
    records = [
        make_record(
            item, sampled, response, settings.extract, cot=settings.strategy.cot, latency=latency
        )
        for sampled, (response, latency) in draws
    ]
    failed = next((r for r in records if r["error"] is not None), None)
    vote = majority_vote([vote_key(item, r) for r in records])
    chosen = dict(failed or records[vote.winner or 0])
    chosen.update(draw_totals(records))
    chosen["samples"] = [
        draw_summary(sampled, r) for (sampled, _), r in zip(draws, records, strict=True)
    ]
    chosen["votes"] = vote.votes
    chosen["agreement"] = round(vote.agreement, 6)
    chosen["tie"] = vote.tie
    return chosen


def vote_key(item: Item, record: Record) -> str | None:
    """What a draw votes for: its read answer (free text normalised); None when unread."""
    extraction = record.get("extraction")
    if not extraction or extraction["status"] != "ok" or extraction["answer"] is None:
        return None
    answer = str(extraction["answer"])
    return normalize_answer(answer) if item.kind in FREE_TEXT_KINDS else answer


def draw_totals(records: list[Record]) -> dict[str, Any]:
    """Usage and latency summed over several requests of one item; cached when all were."""
    usage: Counter[str] = Counter()
    for record in records:
        usage.update({k: int(v) for k, v in (record.get("usage") or {}).items()})
    return {
        "usage": dict(usage),
        "latency": round(sum(float(r["latency"] or 0.0) for r in records), 6),
        "cached": all(bool(r["cached"]) for r in records),
    }


def draw_summary(request: Request, record: Record) -> dict[str, Any]:
    """One draw as recorded beside the item: seed, output, read answer, status, error."""
    extraction = record.get("extraction") or {}
    return {
        "seed": request.params.get("seed"),
        "output": record["output"],
        "answer": extraction.get("answer"),
        "status": extraction.get("status"),
        "error": record["error"],
    }
