"""Which items a judge stage sends, which the rules settle, and the request for each call."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from medlens.core.items import Item, check_image, rgb_image_bytes
from medlens.core.records import Record
from medlens.execution.requests import fingerprint
from medlens.judges.mmbu import LabelSet, build_mmbu_prompt
from medlens.judges.protocol import JudgeProtocol, PromptInputs, build_prompt
from medlens.models.base import ImagePart, Message, Request, TextPart


@dataclass(frozen=True)
class JudgeSettings:
    """What shapes every judge request of one stage."""

    protocol: JudgeProtocol
    scope: str
    repeats: int
    images: bool = False
    with_question: bool = False
    kinds: frozenset[str] = frozenset()
    """Item kinds judged (the protocol's, plus ``report`` when asked)."""
    swap: bool = False
    """Ask each item in both orders of its options (``--swap``)."""
    label_sets: Mapping[str, LabelSet] = field(default_factory=dict)
    """``mmbu``: each dataset's (``source``) label set and taxonomy."""
    self_models: frozenset[str] = frozenset()
    """Model names the evaluated run answered with (spec and served, lower case): a judge
    reply served by one of them stops the stage, unless self-judging was allowed."""


@dataclass(frozen=True)
class JudgeTask:
    """One call to make: an item's answer under one repeat (and order)."""

    item: Item
    answer: str
    repeat: int
    swapped: bool = False
    """The second order of ``--swap``: options listed last letter first."""


def answer_text(record: Record) -> str:
    """What the model answered, as it wrote it: the judge reads free text itself (the rules'
    extraction may have cut a paraphrase down to the wrong phrase)."""
    return str(record.get("output") or "").strip()


def eligible(item: Item, record: Record | None, settings: JudgeSettings) -> bool:
    """An answered item of a judged kind with a gold answer (choice: with options)."""
    if record is None or record.get("error") is not None or item.answer is None:
        return False
    if item.kind not in settings.kinds:
        return False
    if item.kind == "classify" and item.options:
        return False  # a classification with options is settled by choice rules
    return isinstance(item.answer, str)


def settled_by_rules(item: Item, record: Record, settings: JudgeSettings) -> bool:
    """In scope `unresolved`, the rules settle a right answer (equivalence, rubric) or any
    option they read (choice)."""
    if settings.scope != "unresolved":
        return False
    if settings.protocol.kind == "choice":
        return (record.get("extraction") or {}).get("status") != "unparsed"
    return record.get("score") == 1.0


def rule_judgement(item: Item, record: Record) -> dict[str, Any]:
    """The judgements.jsonl line of an item the rules settled (no call)."""
    return {
        "id": item.id,
        "repeat": 0,
        "by": "rule",
        "fingerprint": None,
        "output": None,
        "status": "ok",
        "verdict": None,
        "score": float(record.get("score") or 0.0),
        "error": None,
        "latency": 0.0,
        "usage": {},
        "cached": False,
    }


def build_judge_request(
    task: JudgeTask,
    judge_spec: str,
    settings: JudgeSettings,
    attempt: int,
    max_tokens: int | None = None,
) -> Request:
    """The judge request (one user message) and its fingerprint; `attempt` 1 is the retry of a
    reply without a verdict, so it is not answered from the response cache (`max_tokens`: a
    larger cap for the retry of a reply cut at the limit)."""
    protocol, item = settings.protocol, task.item
    show_question = protocol.shows_question or settings.with_question
    inputs = PromptInputs(
        answer=task.answer,
        gold=_gold_text(item),
        question=item.question if show_question else None,
        options=item.options if protocol.kind == "choice" else {},
        reverse_options=task.swapped,
    )
    parts: list[TextPart | ImagePart] = []
    if (settings.images or protocol.shows_images) and protocol.kind != "mmbu":
        parts.extend(_image_parts(item))  # MMBU's judge never sees the image
    parts.append(TextPart(_prompt_text(protocol, inputs, settings, item)))
    messages = (Message("user", tuple(parts)),)
    params: dict[str, Any] = {
        "judge_template": protocol.template_sha256,
        "repeat": task.repeat,
        "attempt": attempt,
    }
    if task.swapped:  # only then: the fingerprints of unswapped stages stay as they were
        params["order"] = "swapped"
    if max_tokens is not None:
        params["max_tokens"] = max_tokens
    return Request(item, messages, params, fingerprint(judge_spec, messages, params))


def _prompt_text(
    protocol: JudgeProtocol, inputs: PromptInputs, settings: JudgeSettings, item: Item
) -> str:
    if protocol.kind != "mmbu":
        return build_prompt(protocol, inputs)
    return build_mmbu_prompt(protocol, inputs, settings.label_sets[item.meta.get("source", "")])


def _gold_text(item: Item) -> str | None:
    if item.kind == "choice" or item.kind == "multi_choice":
        return None  # the choice extractor names the chosen option; it is not told the gold
    gold = item.answer if isinstance(item.answer, str) else None
    return item.options.get(gold, gold) if gold is not None else None


def _image_parts(item: Item) -> list[ImagePart]:
    parts = []
    for image in item.images:
        data = image.read_bytes()
        if item.meta.get("convert_rgb") == "1":
            data = rgb_image_bytes(data, image.name or image.path)
        check_image(data, image.name or image.path)
        parts.append(ImagePart(data=data, sha256=hashlib.sha256(data).hexdigest(), name=image.name))
    return parts
