"""Ensemble refinement (Med-PaLM 2): K sampled reasoning paths, then one request conditioned on them.

Each path is a chain-of-thought request of its own, sampled as self-consistency draws are
(temperature `strategies.SELF_CONSISTENCY_TEMPERATURE`, seed ``run seed × 1000 + k``), so it has
its own fingerprint and cache entry. The refining request is the item's own conversation with
the K paths appended to its last user turn, each between ``<path k>`` tags (model output is
untrusted text: a tag inside it is defused), asked at the run's own generation parameters.
The record is the refining request's record plus ``paths`` (seed, output, read answer, status,
error of every path), ``refined_from`` (K) and ``path_agreement`` (share of the
paths whose answer the refined one repeats); usage and latency add up over the K + 1 requests.
A failed path fails the item before the refining request is sent (retried on resume, the paths
then come from the cache).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.execution.consistency import draw_summary, draw_totals, vote_key
from medlens.execution.replies import make_record, timed_generate
from medlens.execution.requests import fingerprint
from medlens.execution.strategies import sample_params
from medlens.models.base import Message, Model, Request, TextPart

if TYPE_CHECKING:
    from medlens.execution.requests import RunSettings

REFINE_INSTRUCTION = (
    "Above are {k} independent reasoning paths another clinician wrote for this question, each "
    "between <path> tags. They may disagree and may be wrong. Weigh them, reason step by step "
    "yourself, then give your final answer on the last line, starting with 'Answer:'."
)

_TAG = re.compile(r"</?\s*path\b[^>]*>", re.IGNORECASE)


async def answer_by_refinement(
    item: Item, request: Request, model: Model, settings: RunSettings
) -> Record:
    """K sampled paths for `item`, then the refining request; its record carries every path."""
    paths: list[tuple[Request, Record]] = []
    for index in range(settings.strategy.refine):
        params = sample_params(request.params, settings.seed, index)
        sampled = Request(
            item, request.messages, params, fingerprint(model.spec, request.messages, params)
        )
        response, latency = await timed_generate(model, sampled)
        record = make_record(item, sampled, response, settings.extract, cot=True, latency=latency)
        paths.append((sampled, record))
    failed = next((r for _, r in paths if r["error"] is not None), None)
    records = [r for _, r in paths]
    if failed is None:
        refining = refinement_request(item, request, model.spec, [r["output"] for r in records])
        response, latency = await timed_generate(model, refining)
        final = make_record(item, refining, response, settings.extract, cot=True, latency=latency)
        records.append(final)
    chosen = dict(failed or records[-1])
    chosen.update(draw_totals(records))
    chosen["paths"] = [draw_summary(sampled, record) for sampled, record in paths]
    chosen["refined_from"] = settings.strategy.refine
    if failed is None:
        chosen["path_agreement"] = round(path_agreement(item, records[:-1], records[-1]), 6)
    return chosen


def path_agreement(item: Item, paths: list[Record], final: Record) -> float:
    """Share of the paths whose read answer is the refined answer (0 when it was not read)."""
    refined = vote_key(item, final)
    if refined is None:
        return 0.0
    return sum(vote_key(item, path) == refined for path in paths) / len(paths)


def refinement_request(
    item: Item, request: Request, model_spec: str, outputs: list[str | None]
) -> Request:
    """The item's conversation with the paths appended to its last user turn (run's params)."""
    *earlier, last = request.messages
    parts = (*last.parts, TextPart(refinement_text(outputs)))
    messages = (*earlier, Message(last.role, parts))
    return Request(
        item, messages, request.params, fingerprint(model_spec, messages, request.params)
    )


def refinement_text(outputs: list[str | None]) -> str:
    """The K paths, each delimited and defused, then the refining instruction."""
    blocks = [
        f"<path {number}>\n{_TAG.sub('[tag removed]', text or '')}\n</path {number}>"
        for number, text in enumerate(outputs, start=1)
    ]
    return "\n" + "\n".join(blocks) + "\n" + REFINE_INSTRUCTION.format(k=len(outputs)) + "\n"
