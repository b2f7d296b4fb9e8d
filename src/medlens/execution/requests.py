"""One item's request: its messages (exemplar turns, images, prompt) and fingerprint, from the run's settings."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from medlens.core.items import ImageRef, Item, decode_image, rgb_image_bytes
from medlens.execution.prompts import build_prompt
from medlens.execution.strategies import ZERO_SHOT, Strategy
from medlens.models.base import ImagePart, Message, Request, TextPart
from medlens.runs.files import canonical_bytes

if TYPE_CHECKING:
    from medlens.execution.exemplars import Exemplars
    from medlens.execution.manual import ManualAnswers
    from medlens.execution.probes import Probe
    from medlens.execution.prompt_files import PromptTemplate


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
    vocab: tuple[str, ...] = ()
    """``--vocab`` files answers are read with (set again in each Ray worker)."""
    manual: ManualAnswers | None = None
    """Answers entered by hand (``run --manual FILE``): those items are never asked."""
    template: PromptTemplate | None = None
    """The user's template of ``--prompt file:PATH`` (None for the built-in styles)."""
    benchmark_source: Mapping[str, Any] = field(default_factory=dict)
    """Where the benchmark's files came from (``Benchmark.provenance``): written to run.json as
    ``benchmark_source``, never part of the spec or of a request."""


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

        for exemplar in settings.exemplars.for_item(item):  # asked as the item is (cot too)
            answer = answer_turn(exemplar, settings.strategy.cot)
            messages.append(Message("user", _user_parts(exemplar, settings, None, read_images)))
            messages.append(Message("assistant", (TextPart(answer),)))
    messages.append(Message("user", _user_parts(item, settings, probe, read_images)))
    return Request(
        item, tuple(messages), settings.params,
        fingerprint(model_spec, messages, settings.params),
    )  # fmt: skip


def prompt_text(item: Item, settings: RunSettings) -> str:
    """The text part of the item's user turn: its prompt style, plus the reasoning request."""
    text = build_prompt(item, settings.prompt, settings.template)
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
        if settings.prompt == "mmbu":  # MMBU's pad_to_512, lossless
            from medlens.execution.padding import pad_to_side

            data = pad_to_side(data, name=image.name or image.path)
        # decoded whole, as `check` does: a truncated PNG has a readable header and fails only
        # in its pixels, which the server would have met instead
        digest = hashlib.sha256(data).hexdigest()
        if digest not in _DECODED:  # questions sharing an image: its bytes are decoded once
            decode_image(data, name=image.name or image.path)
            _remember_decoded(digest)
        parts.append(ImagePart(data=data, sha256=digest, name=image.name))
    parts.append(TextPart(prompt_text(item, settings)))
    return tuple(parts)


DECODED_KEPT = 4096
"""How many digests of images that decoded whole are remembered (oldest forgotten first)."""
_DECODED: dict[str, None] = {}


def _remember_decoded(digest: str) -> None:
    """Bytes with this digest decoded whole; decoding is a pure function of the bytes, so the
    same bytes again (another question on the image) need not be decoded to be checked."""
    _DECODED[digest] = None
    if len(_DECODED) > DECODED_KEPT:
        del _DECODED[next(iter(_DECODED))]


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
    # canonical_json's bytes, by orjson; the messages are strings (role, text, image digest)
    return hashlib.sha256(canonical_bytes(payload, float_free=_STRINGS_ONLY)).hexdigest()


_STRINGS_ONLY = frozenset({"model", "messages"})
"""The fingerprint's parts that hold no float: only its parameters are walked for floats."""
