"""Every Eval Ever's instance-level lines (``<uuid>_samples.jsonl``): one per answered item.

Each line holds the question as the model read it (``input.raw``: question, then the options),
the gold (``input.reference``), the reply (``output.raw``), how medlens read it
(``answer_attribution``: the extracted answer and the reader's method, ``medlens:<method>``), the
item's score as medlens counts it (``evaluation``), tokens and latency, and ``error``: the typed
error of a request that failed (``timeout: …``) or ``refused: …`` when the model declined.
An unparsed or empty reply is no error: it scores 0 as medlens counts it, and
``metadata.extraction_status`` says ``unparsed``/``empty``. ``metadata`` also carries the item's
canonical axes, its kind, its number of images and whether its score enters the run's score.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from medlens.core.items import CANONICAL_AXES, Item
from medlens.core.records import Record


def sample_lines(
    items: list[Item], records: dict[str, Record], link: dict[str, str]
) -> Iterator[dict[str, Any]]:
    """The instance lines of the items that have a record; `link`: the aggregate's
    ``schema_version``, ``evaluation_id``, ``model_id``, ``evaluation_name``,
    ``evaluation_result_id``."""
    for item in items:
        record = records.get(item.id)
        if record is not None:
            yield _line(item, record, link)


def _line(item: Item, record: Record, link: dict[str, str]) -> dict[str, Any]:
    raw = _raw_input(item)
    reference = _reference(item)
    extraction = record.get("extraction") or {}
    status = (
        "error" if record.get("error") is not None else str(extraction.get("status") or "empty")
    )
    score = record.get("score")
    line: dict[str, Any] = {
        **link, "sample_id": item.id,
        "sample_hash": _sample_hash(raw, reference), "interaction_type": "single_turn",
        "input": {"raw": raw, "reference": reference,
                  "choices": [f"{k}. {v}" for k, v in item.options.items()] or None},
        "output": {"raw": [] if record.get("output") is None else [str(record["output"])]},
        "answer_attribution": [{
            "turn_idx": 0, "source": "output.raw",
            "extracted_value": "" if extraction.get("answer") is None else str(extraction["answer"]),
            "extraction_method": f"medlens:{extraction.get('method') or status}",
            "is_terminal": True,
        }],
        "evaluation": {"score": float(score) if score is not None else 0.0,
                       "is_correct": score is not None and float(score) == 1.0},
        "error": _error(record, status),
        "metadata": _metadata(item, record, status),
    }  # fmt: skip
    usage = _token_usage(record.get("usage") or {})
    if usage:
        line["token_usage"] = usage
    if isinstance(record.get("latency"), (int, float)):
        line["performance"] = {"latency_ms": round(float(record["latency"]) * 1000.0, 3)}
    return line


def _raw_input(item: Item) -> str:
    parts = [item.context or "", item.question, *(f"{k}. {v}" for k, v in item.options.items())]
    return "\n".join(p for p in parts if p)


def _reference(item: Item) -> list[str]:
    answer = item.answer
    if answer is None:
        return []
    if isinstance(answer, tuple):  # boxes
        return [json.dumps([list(box) for box in answer])]
    return [str(answer)]


def _sample_hash(raw: str, reference: list[str]) -> str:
    """Every Eval Ever's recipe: sha256 of the compact, key-sorted JSON of raw and reference."""
    text = json.dumps({"raw": raw, "reference": reference}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _error(record: Record, status: str) -> str | None:
    error = record.get("error")
    if error is not None:
        return f"{error.get('type', 'error')}: {error.get('message', '')}".strip()
    if status == "refused":
        return "refused: the model declined to answer (scored 0)"
    return None


def _metadata(item: Item, record: Record, status: str) -> dict[str, str]:
    out = {axis: str(item.meta[axis]) for axis in CANONICAL_AXES if axis in item.meta}
    out.update(kind=item.kind, n_images=str(len(item.images)), extraction_status=status,
               counted_in_score="false" if record.get("score") is None else "true",
               cached="true" if record.get("cached") else "false")  # fmt: skip
    return out


def _token_usage(usage: dict[str, Any]) -> dict[str, int] | None:
    """All three counts or none (the schema's rule); provider key names vary."""
    given = usage.get("prompt_tokens", usage.get("input_tokens"))
    taken = usage.get("completion_tokens", usage.get("output_tokens"))
    if not isinstance(given, int) or not isinstance(taken, int):
        return None
    total = usage.get("total_tokens")
    return {"input_tokens": given, "output_tokens": taken,
            "total_tokens": total if isinstance(total, int) else given + taken}  # fmt: skip
