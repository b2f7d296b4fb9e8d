"""Local transformers backend: ``AutoProcessor`` + ``AutoModelForImageTextToText``, batched.

Concurrent ``generate`` calls are collected into batches (up to ``batch_size``, or whatever arrived
while the previous batch ran) and each batch runs ``model.generate`` in a worker thread, so the
event loop stays free. The processor's own chat template formats the prompt, which is what makes
one backend serve every verified family (``hf_families``: LLaVA, LLaVA-NeXT/OneVision, Gemma 3,
Qwen2/2.5/3-VL, InternVL, Idefics3/SmolVLM, Llama 3.2 Vision). The folder is checked before the
weights load (``hf_load``), and the image resolution in effect is recorded and joins the cache
key. Greedy decoding only: answers are reproducible and cacheable. Nothing is downloaded
(``local_files_only``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.specs import Spec, check_options
from medlens.models.base import (
    ImagePart,
    Message,
    ModelContext,
    Request,
    Response,
    TokenAlternatives,
)
from medlens.models.batching import BatchedModel, answer_prepared, chat_turns, token_usage
from medlens.models.hf_families import RESOLUTION_OPTIONS
from medlens.models.images import rgb_image

LABEL_POSITIONS = 16
"""Answer tokens whose alternatives are kept: enough to tell "BI-RADS 3" from "BI-RADS 4"."""
OPTIONS = {"device", "dtype", "max_new_tokens", "batch_size", "top_logprobs", "unverified",
           *RESOLUTION_OPTIONS}  # fmt: skip
# device and batch size change where and how fast, not what is asked: left out of Model.spec.
PLACEMENT_OPTIONS = frozenset({"device", "batch_size"})
DTYPES = ("float32", "float16", "bfloat16", "auto")


@dataclass(frozen=True)
class HFSettings:
    path: str
    device: str = "cpu"
    dtype: str = "float32"
    max_new_tokens: int = 64
    batch_size: int = 8
    top_logprobs: int = 0
    """K > 0: keep the K most likely tokens at the answer position (per-option probabilities)."""
    resolution: dict[str, int] = field(default_factory=dict)
    """The resolution options the spec gives (``max_pixels``, ``max_tiles`` …), as integers."""
    unverified: bool = False
    """Load a vision-language family medlens has not verified (its image settings unchecked)."""


def _whole_number(spec: Spec, key: str, default: int, low: int) -> int:
    raw = spec.option(key)
    try:
        value = int(raw) if raw else default
    except ValueError:
        raise SpecError(f"hf: option {key}={raw!r} is not an integer") from None
    if value < low:
        raise SpecError(f"hf: option {key}={raw!r} must be at least {low}")
    return value


def parse_settings(spec: Spec, params: dict[str, Any]) -> HFSettings:
    check_options(spec, OPTIONS)
    if not spec.argument:
        raise SpecError("hf: give the model folder, e.g. hf:/models/medgemma-4b-it")
    dtype = spec.option("dtype", "float32") or "float32"
    if dtype not in DTYPES:
        raise SpecError(f"hf: option dtype={dtype!r} must be one of {', '.join(DTYPES)}")
    max_new_tokens = _whole_number(spec, "max_new_tokens", int(params.get("max_tokens") or 64), 1)
    batch_size = _whole_number(spec, "batch_size", 8, 1)
    top = _whole_number(spec, "top_logprobs", 0, 0)
    resolution = {key: _whole_number(spec, key, 0, 1) for key in RESOLUTION_OPTIONS
                  if spec.option(key) is not None}  # fmt: skip
    unverified = (spec.option("unverified") or "false").lower()
    if unverified not in ("true", "false"):
        raise SpecError(f"hf: option unverified={unverified!r} must be true or false")
    device = spec.option("device", "cpu") or "cpu"
    return HFSettings(
        spec.argument, device, dtype, max_new_tokens, batch_size, top, resolution,
        unverified == "true",
    )  # fmt: skip


def load(settings: HFSettings) -> tuple[Any, Any, dict[str, Any]]:
    """Processor, model and image settings from a local folder (or the local HF cache);
    never downloads. The folder is checked before the weights load (``hf_load``)."""
    import torch
    from transformers import AutoModelForImageTextToText
    from transformers.utils import logging as hf_logging

    from medlens.models.hf_load import (
        check_processor,
        first_line,
        inspect_checkpoint,
        load_processor,
        settle_images,
    )

    try:
        device = torch.device(settings.device)
    except RuntimeError as exc:
        raise SpecError(
            f"hf: option device={settings.device!r} is not a torch device ({exc})"
        ) from None
    checkpoint = inspect_checkpoint(settings.path, settings.resolution, settings.unverified)
    processor = load_processor(checkpoint)
    check_processor(checkpoint, processor)
    dtype = "auto" if settings.dtype == "auto" else getattr(torch, settings.dtype)
    try:
        model: Any = AutoModelForImageTextToText.from_pretrained(
            settings.path, dtype=dtype, local_files_only=True
        )
    except (OSError, ValueError) as exc:
        raise SpecError(
            f"hf: cannot load a vision-language model from {settings.path} ({first_line(exc)})"
        ) from None
    images = settle_images(checkpoint, processor, model.config, settings.resolution)
    hf_logging.disable_progress_bar()  # medlens shows its own progress; keep stderr readable
    tokenizer = getattr(processor, "tokenizer", processor)
    tokenizer.padding_side = "left"  # decoder-only batches must be padded on the left
    return processor, model.to(device).eval(), images


def conversation(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """medlens messages → the chat-template format with PIL images inside the content parts."""
    return chat_turns(
        messages, lambda part: {"type": "image", "image": rgb_image(part.data, part.name)}
    )


def image_count(request: Request) -> int:
    return sum(isinstance(p, ImagePart) for m in request.messages for p in m.parts)


class HFModel(BatchedModel):
    """A transformers vision-language model answering batches of requests greedily."""

    deterministic = True
    worth_caching = True

    def __init__(
        self,
        spec: Spec,
        settings: HFSettings,
        loaded: tuple[Any, Any, dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(settings.batch_size, "hf")
        public = {k: v for k, v in spec.options.items() if k not in PLACEMENT_OPTIONS}
        self.spec = Spec(spec.name, spec.argument, public).canonical()
        self.settings = settings
        self.generation = {"temperature": 0.0, "max_tokens": settings.max_new_tokens}
        """Greedy decoding up to max_new_tokens (the run card shows it)."""
        self.processor: Any = loaded[0] if loaded else None
        self.model: Any = loaded[1] if loaded else None
        images = loaded[2] if loaded else None
        self.image_settings: dict[str, Any] | None = images
        """The family and the image resolution in effect (``run.json["image_settings"]``);
        None when the weights were not loaded (``describe_only``)."""

    @property
    def cache_identity(self) -> str:
        """The checkpoint by content hash and revision, and the image resolution in effect:
        new weights at an old path, or the same weights shown larger images, re-ask."""
        import json

        from medlens.runs.provenance import weights_key

        key = weights_key(self.settings.path)
        if self.image_settings is not None:
            key += ";images=" + json.dumps(self.image_settings, sort_keys=True)
        return key

    def answer_batch(self, requests: list[Request]) -> list[Response]:
        """Answer requests grouped by image count (processors want uniform batches)."""
        answers: dict[int, Response] = {}
        groups: dict[int, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(image_count(request), []).append(index)
        for indices in groups.values():
            for index, response in zip(
                indices, self._answer_group([requests[i] for i in indices]), strict=True
            ):
                answers[index] = response
        return [answers[index] for index in range(len(requests))]

    def _answer_group(self, requests: list[Request]) -> list[Response]:
        responses = answer_prepared(requests, conversation, self._generate)
        if not self.settings.top_logprobs:
            return responses
        from medlens.models.option_logprobs import option_probabilities_along

        return [
            replace(
                r,
                option_probs=option_probabilities_along(q.item, r.answer_positions),
                answer_positions=None,
            )
            if r.answer_positions is not None
            else r
            for q, r in zip(requests, responses, strict=True)
        ]

    def model_inputs(self, conversations: list[list[dict[str, Any]]]) -> Any:
        """The chat template applied and the images processed: the model's keyword arguments
        for one left-padded batch, on the model's device."""
        inputs = self.processor.apply_chat_template(
            conversations,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
            processor_kwargs={"padding": True},
        ).to(self.model.device)
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(self.model.dtype)
        return inputs

    def _generate(self, conversations: list[list[dict[str, Any]]]) -> list[Response]:
        """One batched greedy ``generate``; usage counts real (unpadded) tokens."""
        import torch

        started = time.perf_counter()
        inputs = self.model_inputs(conversations)
        scored = self.settings.top_logprobs > 0
        with torch.inference_mode():
            output = self.model.generate(
                **inputs, max_new_tokens=self.settings.max_new_tokens, do_sample=False,
                output_scores=scored, return_dict_in_generate=scored,
            )  # fmt: skip
        sequences = output.sequences if scored else output
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = sequences[:, prompt_length:]
        alternatives = (
            self._alternatives(output.scores, new_tokens) if scored else [None] * len(conversations)
        )
        texts = self.processor.batch_decode(new_tokens, skip_special_tokens=True)
        prompt_counts = inputs["attention_mask"].sum(dim=1).tolist()
        latency = (time.perf_counter() - started) / len(conversations)
        responses = []
        for text, prompt, row, alternative in zip(
            texts, prompt_counts, new_tokens, alternatives, strict=True
        ):
            usage = self._usage(int(prompt), row)
            responses.append(
                Response(text.strip(), usage=usage, latency=latency, answer_positions=alternative,
                         finish_reason=self._finish_reason(row))
            )  # fmt: skip
        return responses

    def _finish_reason(self, generated: Any) -> str:
        """``stop`` when a stop token ended the answer, ``length`` when max_new_tokens did."""
        stops = self.model.generation_config.eos_token_id
        stop_ids = set(stops if isinstance(stops, list) else [stops] if stops is not None else [])
        return "stop" if any(int(t) in stop_ids for t in generated.tolist()) else "length"

    def _alternatives(
        self, scores: Any, new_tokens: Any
    ) -> list[tuple[TokenAlternatives, ...] | None]:
        """Per row: the K most likely tokens (text → log-probability) at each generated token
        from the first one that is not whitespace or punctuation, up to
        :data:`LABEL_POSITIONS` of them (labels that share a start are told apart further
        into the answer: ``option_logprobs``), from the scores ``generate`` returns (greedy:
        the logits after its processors)."""
        import math

        import torch

        from medlens.models.option_logprobs import answer_position

        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        k = min(self.settings.top_logprobs, int(scores[0].shape[-1]))
        rows: list[tuple[TokenAlternatives, ...] | None] = []
        for row in range(new_tokens.shape[0]):
            positions: list[TokenAlternatives] = []
            kept = 0
            for step, logits in enumerate(scores):
                token = tokenizer.decode([int(new_tokens[row, step])], skip_special_tokens=True)
                logprobs = torch.log_softmax(logits[row].float(), dim=-1)
                top = torch.topk(logprobs, k)
                merged: dict[str, float] = {}
                for value, index in zip(top.values.tolist(), top.indices.tolist(), strict=True):
                    text = tokenizer.decode([index], skip_special_tokens=True)
                    merged[text] = merged.get(text, 0.0) + math.exp(value)
                positions.append((token, {t: math.log(p) for t, p in merged.items() if p > 0}))
                kept += answer_position(positions) is not None
                if kept >= LABEL_POSITIONS:
                    break
            rows.append(tuple(positions) if answer_position(positions) is not None else None)
        return rows

    def _usage(self, prompt_tokens: int, generated: Any) -> dict[str, int]:
        """Generated tokens up to and including the first stop token (the rest is padding)."""
        stops = self.model.generation_config.eos_token_id
        stop_ids = set(stops if isinstance(stops, list) else [stops] if stops is not None else [])
        completion = 0
        for token in generated.tolist():
            completion += 1
            if token in stop_ids:
                break
        return token_usage(prompt_tokens, completion)


def make_hf(spec: Spec, context: ModelContext) -> HFModel:
    """Factory for ``hf:PATH?device=cpu&dtype=float32&max_new_tokens=64&batch_size=8``
    (``&top_logprobs=K``: per-option probabilities from the generation scores)."""
    settings = parse_settings(spec, dict(context.params))
    if context.describe_only:
        from medlens.models.hf_load import inspect_checkpoint

        if os.path.isdir(os.path.expanduser(settings.path)):  # a hub id is checked when it loads
            inspect_checkpoint(settings.path, settings.resolution, settings.unverified)
        return HFModel(spec, settings)
    return HFModel(spec, settings, load(settings))
