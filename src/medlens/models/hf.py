"""Local transformers backend: ``AutoProcessor`` + ``AutoModelForImageTextToText``, batched.

Concurrent ``generate`` calls are collected into batches (up to ``batch_size``, or whatever arrived
while the previous batch ran) and each batch runs ``model.generate`` in a worker thread, so the
event loop stays free. The processor's own chat template formats the prompt, which is what makes
one backend serve LLaVA, Gemma 3 / MedGemma, Qwen2.5/3-VL and InternVL alike. Greedy decoding only:
answers are reproducible and cacheable. Nothing is downloaded (``local_files_only``).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
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
from medlens.models.images import rgb_image

LABEL_POSITIONS = 16
"""Answer tokens whose alternatives are kept: enough to tell "BI-RADS 3" from "BI-RADS 4"."""
OPTIONS = {"device", "dtype", "max_new_tokens", "batch_size", "top_logprobs"}
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


def parse_settings(spec: Spec, params: dict[str, Any]) -> HFSettings:
    check_options(spec, OPTIONS)
    if not spec.argument:
        raise SpecError("hf: give the model folder, e.g. hf:/models/medgemma-4b-it")
    dtype = spec.option("dtype", "float32") or "float32"
    if dtype not in DTYPES:
        raise SpecError(f"hf: option dtype={dtype!r} must be one of {', '.join(DTYPES)}")
    numbers: dict[str, int] = {}
    defaults = {"max_new_tokens": int(params.get("max_tokens") or 64), "batch_size": 8}
    for key, default in defaults.items():
        raw = spec.option(key)
        try:
            numbers[key] = int(raw) if raw else default
        except ValueError:
            raise SpecError(f"hf: option {key}={raw!r} is not an integer") from None
        if numbers[key] < 1:
            raise SpecError(f"hf: option {key}={raw!r} must be at least 1")
    device = spec.option("device", "cpu") or "cpu"
    raw_top = spec.option("top_logprobs")
    try:
        top = int(raw_top) if raw_top else 0
    except ValueError:
        raise SpecError(f"hf: option top_logprobs={raw_top!r} is not an integer") from None
    if top < 0:
        raise SpecError(f"hf: option top_logprobs={raw_top!r} must be at least 0")
    return HFSettings(
        spec.argument, device, dtype, numbers["max_new_tokens"], numbers["batch_size"], top
    )


def load(settings: HFSettings) -> tuple[Any, Any]:
    """Processor and model from a local folder (or the local HF cache); never downloads."""
    import torch
    from transformers import AutoModelForImageTextToText, AutoProcessor
    from transformers.utils import logging as hf_logging

    try:
        device = torch.device(settings.device)
    except RuntimeError as exc:
        raise SpecError(
            f"hf: option device={settings.device!r} is not a torch device ({exc})"
        ) from None
    if settings.path.startswith(("/", ".", "~")) and not os.path.isdir(settings.path):
        raise SpecError(f"hf: no model folder at {settings.path}")
    dtype = "auto" if settings.dtype == "auto" else getattr(torch, settings.dtype)
    try:
        processor = AutoProcessor.from_pretrained(settings.path, local_files_only=True)
        model: Any = AutoModelForImageTextToText.from_pretrained(
            settings.path, dtype=dtype, local_files_only=True
        )
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SpecError(
            f"hf: cannot load a vision-language model from {settings.path} ({first})"
        ) from None
    hf_logging.disable_progress_bar()  # medlens shows its own progress; keep stderr readable
    tokenizer = getattr(processor, "tokenizer", processor)
    tokenizer.padding_side = "left"  # decoder-only batches must be padded on the left
    return processor, model.to(device).eval()


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

    def __init__(self, spec: Spec, settings: HFSettings, processor: Any, model: Any) -> None:
        super().__init__(settings.batch_size, "hf")
        public = {k: v for k, v in spec.options.items() if k not in PLACEMENT_OPTIONS}
        self.spec = Spec(spec.name, spec.argument, public).canonical()
        self.settings = settings
        self.generation = {"temperature": 0.0, "max_tokens": settings.max_new_tokens}
        """Greedy decoding up to max_new_tokens (the run card shows it)."""
        self.processor = processor
        self.model = model

    @property
    def cache_identity(self) -> str:
        """The checkpoint by content hash and revision, so new weights at an old path re-ask."""
        from medlens.runs.provenance import weights_key

        return weights_key(self.settings.path)

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

    def _generate(self, conversations: list[list[dict[str, Any]]]) -> list[Response]:
        """One batched greedy ``generate``; usage counts real (unpadded) tokens."""
        import torch

        started = time.perf_counter()
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
        return HFModel(spec, settings, None, None)
    processor, model = load(settings)
    return HFModel(spec, settings, processor, model)
