"""A model's reply to one request, timed, then read and scored into the item's record."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.extract import extract
from medlens.models.base import Model, Request, Response
from medlens.scoring.item_scores import item_scores, read_and_score, score

if TYPE_CHECKING:
    pass


def make_record(
    item: Item,
    request: Request | None,
    response: Response,
    extract_mode: str,
    *,
    cot: bool = False,
    latency: float | None = None,
) -> Record:
    """The record of one answered (or failed) item, scored under its extraction mode (a peer
    mode's verdict is the peer's own) and under VLMEvalKit's rules.

    Under chain-of-thought only the final 'Answer:' line is read (`strategies.final_answer_text`).
    `latency` replaces the response's own when given (measured around a backend that gave none).
    """
    record: Record = {
        "id": item.id,
        "fingerprint": request.fingerprint if request else None,
        "output": response.text,
        "latency": round(response.latency if latency is None else latency, 6),
        "cached": response.cached,
        "usage": dict(response.usage),
        "error": None,
        "extraction": None,
        "score": None,
        "vlmeval": None,
        "scores": {},
    }
    if response.option_probs is not None:
        record["option_probs"] = dict(response.option_probs)
    if response.served_model is not None or response.system_fingerprint is not None:
        record["served_model"] = response.served_model
        record["system_fingerprint"] = response.system_fingerprint
    if response.retries:
        record["retries"] = dict(response.retries)
    if response.finish_reason is not None:  # "length": cut at the token cap (issue 23)
        record["finish_reason"] = response.finish_reason
    if response.cache_key is not None:
        record["cache_key"] = response.cache_key
    if response.manual is not None:  # entered by hand (run --manual)
        record["manual"] = dict(response.manual)
    if response.error is not None:
        record["error"] = {"type": response.error.type, "message": response.error.message}
        return record
    text = response.text
    if cot and text is not None:
        from medlens.execution.strategies import final_answer_text

        text = final_answer_text(text)
    extraction, main = read_and_score(item, text, extract_mode, response.finish_reason)
    record["extraction"] = extraction.to_json()
    record["score"] = main
    record["scores"] = item_scores(item, extraction)
    if extract_mode == "vlmeval":  # the same reading: the rules are deterministic
        record["vlmeval"] = {**record["extraction"], "score": record["score"]}
    else:
        compat = extract(item, text, "vlmeval")
        record["vlmeval"] = {**compat.to_json(), "score": score(item, compat)}
    return record


def redraw_in_document_order(records: dict[str, Record], items: list[Item], mode: str) -> int:
    """lmms-eval's random fallbacks drawn as lmms-eval draws them: one ``random.Random(0)``
    stream over the unreadable answers in document order (``extract.peers.lmms_eval``). Records
    are scored as answers arrive, in no fixed order, so the run redraws them when it finishes;
    returns how many records changed (resumed runs redraw every fallback again, alike)."""
    if mode != "lmms-eval":
        return 0
    from medlens.extract.peers.lmms_eval import FallbackStream, fallback_choices

    stream, changed = FallbackStream(), 0
    for item in items:
        record = records.get(item.id)
        extraction = (record or {}).get("extraction") or {}
        if record is None or extraction.get("method") != "lmms-eval:random_fallback":
            continue
        letter = stream.choice(fallback_choices(item))
        verdict = None if item.answer is None else float(letter == item.answer)
        if extraction.get("answer") != letter or record.get("score") != verdict:
            record["extraction"] = {**extraction, "answer": letter}
            record["score"] = verdict
            changed += 1
    return changed


async def timed_generate(model: Model, request: Request) -> tuple[Response, float]:
    """The model's response and its latency: the backend's own, else measured here."""
    started = time.perf_counter()
    response = await model.generate(request)
    if not response.latency and not response.cached:
        return response, time.perf_counter() - started
    return response, response.latency
