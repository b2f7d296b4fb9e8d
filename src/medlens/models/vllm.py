"""Offline vLLM backend: one in-process engine, ``LLM.chat`` with multimodal messages, batched.

Optional (``pip install 'medlens[vllm]'``); without vllm the factory raises a SpecError that says
so and names the alternative (serve the model with ``vllm serve`` and use ``openai:``). Images go
in as lossless PNG data URLs, exactly as the ``openai:`` backend sends them, so a local vLLM run
and a served one see the same pixels. Greedy by default (temperature 0), hence cacheable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.specs import NUMBER_KINDS, Spec, check_options
from medlens.models.base import ImagePart, Message, ModelContext, Request, Response
from medlens.models.batching import BatchedModel, answer_prepared, chat_turns, token_usage
from medlens.models.images import png_data_url

INT_OPTIONS = {
    "max_tokens": 64,
    "seed": 0,
    "tensor_parallel_size": 1,
    "max_model_len": 0,
    "batch_size": 64,
    "max_images": 4,
}
FLOAT_OPTIONS = {"temperature": 0.0, "gpu_memory_utilization": 0.9}
# Where the engine runs and how it batches; not what is asked: left out of Model.spec.
ENGINE_OPTIONS = frozenset(
    {"tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "batch_size", "max_images"}
)
MISSING = (
    "vllm: the vllm package is not installed (pip install 'medlens[vllm]'); or serve the model "
    "with `vllm serve PATH` and use --model 'openai:PATH?base_url=http://HOST:8000/v1'"
)


@dataclass(frozen=True)
class VLLMSettings:
    path: str
    numbers: dict[str, float]


def parse_settings(spec: Spec, params: dict[str, Any]) -> VLLMSettings:
    check_options(spec, set(INT_OPTIONS) | set(FLOAT_OPTIONS))
    if not spec.argument:
        raise SpecError("vllm: give the model folder or name, e.g. vllm:/models/medgemma-4b-it")
    numbers: dict[str, float] = {}
    for key, default in {**INT_OPTIONS, **FLOAT_OPTIONS}.items():
        raw = spec.option(key)
        kind = int if key in INT_OPTIONS else float
        fallback = params.get(key, default)
        try:
            numbers[key] = kind(raw) if raw else kind(fallback)
        except ValueError:
            raise SpecError(f"vllm: option {key}={raw!r} is not a {NUMBER_KINDS[kind]}") from None
        if numbers[key] < 0:
            raise SpecError(f"vllm: option {key}={raw!r} must not be negative")
    return VLLMSettings(spec.argument, numbers)


def engine(settings: VLLMSettings) -> tuple[Any, Any]:
    """The ``vllm.LLM`` engine and its ``SamplingParams``; SpecError when vllm is missing."""
    try:
        import vllm
    except ImportError:
        raise SpecError(MISSING) from None
    n = settings.numbers
    kwargs: dict[str, Any] = {
        "model": settings.path,
        "tensor_parallel_size": int(n["tensor_parallel_size"]),
        "gpu_memory_utilization": n["gpu_memory_utilization"],
        "limit_mm_per_prompt": {"image": int(n["max_images"])},
        "seed": int(n["seed"]),
    }
    if n["max_model_len"]:
        kwargs["max_model_len"] = int(n["max_model_len"])
    llm = vllm.LLM(**kwargs)
    sampling = vllm.SamplingParams(
        temperature=n["temperature"], max_tokens=int(n["max_tokens"]), seed=int(n["seed"])
    )
    return llm, sampling


def openai_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """medlens messages → OpenAI-style chat messages with PNG data URLs (what LLM.chat takes)."""
    return chat_turns(messages, _image_url)


def _image_url(part: ImagePart) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": png_data_url(part.data, part.name)}}


class VLLMModel(BatchedModel):
    """Answers batches of requests with one offline vLLM engine."""

    worth_caching = True

    def __init__(self, spec: Spec, settings: VLLMSettings, llm: Any, sampling: Any) -> None:
        super().__init__(int(settings.numbers["batch_size"]) or 64, "vllm")
        public = {k: v for k, v in spec.options.items() if k not in ENGINE_OPTIONS}
        self.spec = Spec(spec.name, spec.argument, public).canonical()
        self.deterministic = settings.numbers["temperature"] == 0.0 or "seed" in spec.options
        n = settings.numbers
        self.generation = {"temperature": n["temperature"], "max_tokens": int(n["max_tokens"]),
                           "seed": int(n["seed"])}  # fmt: skip
        self.llm = llm
        self.sampling = sampling
        self.path = settings.path

    @property
    def cache_identity(self) -> str:
        """The checkpoint by content hash and revision, so new weights at an old path re-ask."""
        from medlens.runs.provenance import weights_key

        return weights_key(self.path)

    def answer_batch(self, requests: list[Request]) -> list[Response]:
        """One ``LLM.chat`` call for every request whose images could be prepared."""
        return answer_prepared(requests, openai_messages, self._chat)

    def _chat(self, conversations: list[list[dict[str, Any]]]) -> list[Response]:
        started = time.perf_counter()
        outputs = self.llm.chat(conversations, sampling_params=self.sampling, use_tqdm=False)
        latency = (time.perf_counter() - started) / len(conversations)
        return [response_of(output, latency) for output in outputs]


def response_of(output: Any, latency: float) -> Response:
    """A vLLM ``RequestOutput`` → Response with token usage and why it stopped."""
    completion = output.outputs[0]
    usage = token_usage(len(output.prompt_token_ids or ()), len(completion.token_ids or ()))
    finish = getattr(completion, "finish_reason", None)
    return Response(
        completion.text,
        usage=usage,
        latency=latency,
        finish_reason=finish if isinstance(finish, str) and finish else None,
    )


def make_vllm(spec: Spec, context: ModelContext) -> VLLMModel:
    """Factory for ``vllm:PATH?max_tokens=&temperature=&tensor_parallel_size=&...``."""
    settings = parse_settings(spec, dict(context.params))
    if context.describe_only:
        return VLLMModel(spec, settings, None, None)
    llm, sampling = engine(settings)
    return VLLMModel(spec, settings, llm, sampling)
