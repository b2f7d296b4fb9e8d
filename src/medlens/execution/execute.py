"""The runner: item → request → model → extraction → score → record, with bounded concurrency.

How an executor plugs in: an executor is an async function with the shape of :func:`run_local`:
it receives the items still to do, a way to get a model, the :class:`RunSettings` and a callback
``on_record(record)`` that it must call (in the driver process) once per finished item. The
per-item work is :func:`process_item`; executors differ only in where that runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medlens.core.errors import ItemError
from medlens.core.items import ImageRef, Item, check_image, rgb_image_bytes
from medlens.execution.prompts import build_prompt
from medlens.execution.strategies import ZERO_SHOT, Strategy
from medlens.extract import extract
from medlens.models.base import ImagePart, Message, Model, Request, Response, TextPart
from medlens.runs.store import Record, canonical_json
from medlens.scoring.item_scores import item_scores, score

if TYPE_CHECKING:
    from medlens.execution.exemplars import Exemplars
    from medlens.execution.probes import Probe

OnRecord = Callable[[Record], None]


@dataclass(frozen=True)
class RunSettings:
    """Everything about a run that shapes each request and its scoring."""

    prompt: str = "medlens"
    extract: str = "medlens"
    params: Mapping[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    probe: str | None = None
    seed: int = 0
    strategy: Strategy = ZERO_SHOT
    exemplars: Exemplars | None = None
    """Few-shot exemplars chosen for the run (None unless the strategy asks for them)."""


def build_request(
    item: Item,
    model_spec: str,
    settings: RunSettings,
    probe: Probe | None,
    read_images: bool = True,
) -> Request:
    """Read the item's images (checked to be images) and assemble messages and fingerprint.

    Few-shot exemplars come first as solved user/assistant turns (their images unprobed).
    With `read_images` False (a model that never looks at pixels: the baselines) images are
    only named: no bytes are read or decoded, and the fingerprint uses their references.
    """
    messages: list[Message] = []
    if settings.exemplars is not None:
        from medlens.execution.exemplars import answer_turn

        solved = exemplar_settings(settings)
        for exemplar in settings.exemplars.for_item(item):
            messages.append(Message("user", _user_parts(exemplar, solved, None, read_images)))
            messages.append(Message("assistant", (TextPart(answer_turn(exemplar)),)))
    messages.append(Message("user", _user_parts(item, settings, probe, read_images)))
    return Request(
        item, tuple(messages), settings.params,
        fingerprint(model_spec, messages, settings.params),
    )  # fmt: skip


def exemplar_settings(settings: RunSettings) -> RunSettings:
    """Exemplar turns are asked without the reasoning request: their answers carry none."""
    from dataclasses import replace

    return replace(settings, strategy=replace(settings.strategy, cot=False))


def prompt_text(item: Item, settings: RunSettings) -> str:
    """The text part of the item's user turn: its prompt style, plus the reasoning request."""
    text = build_prompt(item, settings.prompt)
    if settings.strategy.cot:
        from medlens.execution.strategies import COT_INSTRUCTION

        text += COT_INSTRUCTION + "\n"
    return text


def _user_parts(
    item: Item, settings: RunSettings, probe: Probe | None, read_images: bool
) -> tuple[TextPart | ImagePart, ...]:
    parts: list[TextPart | ImagePart] = []
    if not read_images:
        parts.extend(_unread_image(image) for image in item.images)
    for index, image in enumerate(item.images if read_images else ()):
        data: bytes | None = image.read_bytes()
        if probe is not None and data is not None:
            data = probe.apply_image(item, index, data)
        if data is None:
            continue
        if item.meta.get("convert_rgb") == "1":
            data = rgb_image_bytes(data, image.name or image.path)
        check_image(data, image.name or image.path)
        parts.append(ImagePart(data=data, sha256=hashlib.sha256(data).hexdigest(), name=image.name))
    parts.append(TextPart(prompt_text(item, settings)))
    return tuple(parts)


def _unread_image(image: ImageRef) -> ImagePart:
    """A placeholder for an image the model does not read, identified by its reference."""
    reference = f"{image.source}\0{image.path}\0{image.offset}\0{image.length}\0{image.name}"
    digest = hashlib.sha256(reference.encode("utf-8")).hexdigest()
    return ImagePart(data=b"", sha256=f"ref:{digest}", name=image.name)


def fingerprint(model_spec: str, messages: Iterable[Message], params: Mapping[str, Any]) -> str:
    """sha256 of canonical JSON: model spec (no secrets), messages with image hashes, parameters."""
    payload = {
        "model": model_spec,
        "messages": [
            [m.role, [p.text if isinstance(p, TextPart) else {"image": p.sha256} for p in m.parts]]
            for m in messages
        ],
        "params": dict(params),
    }
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def make_record(
    item: Item,
    request: Request | None,
    response: Response,
    extract_mode: str,
    *,
    cot: bool = False,
) -> Record:
    """The record of one answered (or failed) item, scored under both extraction modes.

    Under chain-of-thought only the final 'Answer:' line is read (`strategies.final_answer_text`).
    """
    record: Record = {
        "id": item.id,
        "fingerprint": request.fingerprint if request else None,
        "output": response.text,
        "latency": round(response.latency, 6),
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
    if response.error is not None:
        record["error"] = {"type": response.error.type, "message": response.error.message}
        return record
    text = response.text
    if cot and text is not None:
        from medlens.execution.strategies import final_answer_text

        text = final_answer_text(text)
    extraction = extract(item, text, extract_mode)  # type: ignore[arg-type]
    record["extraction"] = extraction.to_json()
    record["score"] = score(item, extraction)
    record["scores"] = item_scores(item, extraction)
    compat = extract(item, text, "vlmeval")
    record["vlmeval"] = {**compat.to_json(), "score": score(item, compat)}
    return record


async def process_item(
    item: Item, model: Model, settings: RunSettings, probe: Probe | None
) -> Record:
    """Do all the work for one item; item-level failures become an errored record."""
    from medlens.models.base import ModelError

    try:
        reads_images = getattr(model, "reads_images", True)
        request = build_request(item, model.spec, settings, probe, reads_images)
    except ItemError as exc:
        failed = Response(text=None, error=ModelError(exc.kind, str(exc)))  # type: ignore[arg-type]
        return make_record(item, None, failed, settings.extract)
    if settings.strategy.samples > 1:
        from medlens.execution.consistency import answer_by_vote

        return await answer_by_vote(item, request, model, settings)
    response = await timed_generate(model, request)
    return make_record(item, request, response, settings.extract, cot=settings.strategy.cot)


async def timed_generate(model: Model, request: Request) -> Response:
    """The model's response, with its latency measured here when the backend gave none."""
    started = time.perf_counter()
    response = await model.generate(request)
    if not response.latency and not response.cached:
        from dataclasses import replace

        response = replace(response, latency=time.perf_counter() - started)
    return response


async def run_local(
    items: Iterable[Item],
    model: Model,
    settings: RunSettings,
    on_record: OnRecord,
    probe: Probe | None = None,
) -> None:
    """Run items on this machine with at most `settings.concurrency` requests in flight."""
    queue = iter(items)

    async def worker() -> None:
        for item in queue:
            on_record(await process_item(item, model, settings, probe))

    await asyncio.gather(*(worker() for _ in range(max(1, settings.concurrency))))
