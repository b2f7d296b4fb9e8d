"""Model backends behind one async protocol, found by name through a lazy registry (heavy imports
only when a backend is chosen). Imports ``runs`` (a replay of a run) and below."""

from __future__ import annotations

from medlens.core.registry import Registry
from medlens.core.specs import Spec
from medlens.models.base import Model, ModelContext, Request, Response

MODELS: Registry = Registry("model")
MODELS.add(
    "random",
    "medlens.models.baselines:make_random",
    "random[?seed=N]",
    "uniform random option (seeded): the chance baseline",
)
MODELS.add("first", "medlens.models.baselines:make_first", "first", "always the first option")
MODELS.add(
    "prior",
    "medlens.models.baselines:make_prior",
    "prior",
    "always the benchmark's most frequent gold letter: exposes answer-position bias",
)
MODELS.add(
    "oracle",
    "medlens.models.baselines:make_oracle",
    "oracle",
    "answers the gold answer; benchmark + scorer must reach 100%",
)
MODELS.add(
    "replay",
    "medlens.models.replay:make_replay",
    "replay:FILE",
    "answers from a VLMEvalKit prediction file (tsv/xlsx/csv) or a medlens run directory",
)
MODELS.add(
    "openai",
    "medlens.models.openai:make_openai",
    "openai:MODEL?base_url=URL&api_key_env=VAR[&max_tokens=&temperature=&seed=&system="
    "&image_detail=&extra_body=JSON&connect_timeout=&read_timeout=&max_retries=&backoff=]",
    "any OpenAI-compatible chat server (vLLM, SGLang, LMDeploy, Ollama, hosted APIs)",
)
MODELS.add(
    "hf",
    "medlens.models.hf:make_hf",
    "hf:PATH[?device=cpu&dtype=float32&max_new_tokens=64&batch_size=8&top_logprobs=K"
    "&max_pixels=&min_pixels=&max_tiles=&longest_edge=&unverified=true]",
    "local transformers checkpoint of a verified family (models --check hf:DIR), batched",
)
MODELS.add(
    "vllm-serve",
    "medlens.models.vllm_serve:make_vllm_serve",
    "vllm-serve:DIR[?max_tokens=&temperature=&seed=&startup_timeout=900&tensor_parallel_size="
    "&max_model_len=&gpu_memory_utilization=&max_images=4&batch_invariant=true&args='...']",
    "starts `vllm serve DIR` ($MEDLENS_VLLM_SERVE), waits until healthy, stops it after the run",
)
MODELS.add(
    "vllm",
    "medlens.models.vllm:make_vllm",
    "vllm:PATH[?max_tokens=&tensor_parallel_size=&gpu_memory_utilization=&max_model_len=]",
    "offline vLLM engine (LLM.chat); needs the vllm extra",
)


def model_identity(spec: Spec) -> str:
    """The spec as it names a model, canonical: an ``openai:`` spec without its transport options
    (``base_url``, timeouts, retries), so a server moved to another host or port is the same model
    (which server answered is the response cache's business, and each record names the model
    that served it)."""
    from medlens.models.openai_settings import without_transport

    return (without_transport(spec) if spec.name == "openai" else spec).canonical()


def load_model(spec: Spec, context: ModelContext) -> Model:
    """Build the backend named by a parsed model spec such as ``openai:gpt-4o?base_url=...``."""
    factory = MODELS.get(spec.name)
    model: Model = factory(spec, context)
    return model


__all__ = ["MODELS", "Model", "ModelContext", "Request", "Response", "load_model"]
