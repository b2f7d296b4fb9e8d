"""``vllm-serve:MODEL_DIR``: medlens starts ``vllm serve MODEL_DIR`` on a free local port, waits
until it is healthy (bounded), answers through the ``openai:`` backend, and stops it when the run
ends, fails or is interrupted (``server_process``: no orphan server).

The command is ``vllm serve`` unless ``$MEDLENS_VLLM_SERVE`` names another (a vLLM in another
environment: ``/opt/vllm/bin/vllm serve``; the tests: a stand-in server script). run.json records
the command line, the server's version (``GET /version``), its time to healthy and the
determinism settings (temperature, request and engine seeds, batch invariance, generation-config
defaults). The cache keys on the weights' hash and the serving settings, as ``vllm:`` does.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from medlens.core.errors import SpecError
from medlens.core.specs import Spec, check_options
from medlens.models.base import ModelContext, Request, Response
from medlens.models.openai import OpenAIChatModel
from medlens.models.openai_settings import OpenAISettings
from medlens.models.openai_settings import parse_settings as parse_openai
from medlens.models.server_process import ServerProcess, free_port

COMMAND_VARIABLE = "MEDLENS_VLLM_SERVE"
DEFAULT_COMMAND = "vllm serve"
REQUEST_OPTIONS = frozenset({"max_tokens", "temperature", "seed", "top_p", "system",
                             "logprobs", "top_logprobs", "extra_body"})  # fmt: skip
"""Sent with every request (as ``openai:`` sends them): part of the model spec."""
CLIENT_OPTIONS = frozenset({"read_timeout", "max_retries", "backoff", "backoff_max"})
ENGINE_NUMBERS = {"port": 0, "startup_timeout": 900, "tensor_parallel_size": 0,
                  "max_model_len": 0, "max_images": 4, "engine_seed": 0}  # fmt: skip
ENGINE_OPTIONS = frozenset({*ENGINE_NUMBERS, "gpu_memory_utilization", "served_model_name",
                            "batch_invariant"})  # fmt: skip
"""Where and how the server runs: recorded in run.json, left out of the model spec."""
SPEC_SERVE_OPTIONS = frozenset({"args"})
"""Extra ``vllm serve`` arguments (``--dtype``, ``--quantization`` …) may change the answers:
part of the model spec and of the cache key."""


@dataclass(frozen=True)
class ServeSettings:
    """The parsed ``vllm-serve:`` spec: what to start, and how."""

    folder: str
    served_name: str
    numbers: dict[str, int]
    gpu_memory_utilization: str | None
    batch_invariant: bool
    extra_args: tuple[str, ...]
    command: tuple[str, ...]
    # served_name: ``--served-model-name`` (the folder's name unless served_model_name says);
    # numbers: ENGINE_NUMBERS as given (0: vLLM's default, or a free port); command: ``vllm
    # serve``, or ``$MEDLENS_VLLM_SERVE`` split as a shell would


def parse_serve(spec: Spec) -> ServeSettings:
    check_options(spec, set(REQUEST_OPTIONS | CLIENT_OPTIONS | ENGINE_OPTIONS | SPEC_SERVE_OPTIONS))
    if not spec.argument:
        raise SpecError("vllm-serve: give the model folder, e.g. vllm-serve:/models/qwen2.5-vl-7b")
    folder = Path(spec.argument).expanduser()
    if not folder.is_dir():
        raise SpecError(f"vllm-serve: no model folder at {spec.argument}")
    numbers = {}
    for key, default in ENGINE_NUMBERS.items():
        raw = spec.option(key)
        try:
            numbers[key] = int(raw) if raw else default
        except ValueError:
            raise SpecError(f"vllm-serve: option {key}={raw!r} is not a whole number") from None
        if numbers[key] < (1 if key == "startup_timeout" else 0):
            raise SpecError(f"vllm-serve: option {key}={raw!r} is out of range")
    invariant = (spec.option("batch_invariant") or "false").lower()
    if invariant not in ("true", "false"):
        raise SpecError(f"vllm-serve: option batch_invariant={invariant!r} must be true or false")
    try:
        extra = tuple(shlex.split(spec.option("args") or ""))
        command = tuple(shlex.split(os.environ.get(COMMAND_VARIABLE) or DEFAULT_COMMAND))
    except ValueError as exc:
        raise SpecError(f"vllm-serve: cannot split the command line ({exc})") from None
    if not command:
        raise SpecError(f"vllm-serve: ${COMMAND_VARIABLE} is empty (leave it unset for vllm serve)")
    return ServeSettings(
        str(folder), spec.option("served_model_name") or folder.resolve().name, numbers,
        spec.option("gpu_memory_utilization"), invariant == "true", extra, command,
    )  # fmt: skip


def server_arguments(settings: ServeSettings, port: int) -> list[str]:
    """The ``vllm serve`` command line: local only, the served name medlens asks for."""
    n = settings.numbers
    argv = [*settings.command, settings.folder, "--host", "127.0.0.1", "--port", str(port),
            "--served-model-name", settings.served_name, "--seed", str(n["engine_seed"]),
            "--limit-mm-per-prompt", json.dumps({"image": n["max_images"]})]  # fmt: skip
    for key in ("tensor_parallel_size", "max_model_len"):
        if n[key]:
            argv += [f"--{key.replace('_', '-')}", str(n[key])]
    if settings.gpu_memory_utilization:
        argv += ["--gpu-memory-utilization", settings.gpu_memory_utilization]
    return argv + list(settings.extra_args)


class VLLMServeModel:
    """A vLLM server medlens started, answered through :class:`OpenAIChatModel`."""

    worth_caching = True
    honours_sampling = True
    reports_served_model = False
    """medlens started it from a folder it hashed: the cache keys on the weights instead."""

    def __init__(
        self, spec: Spec, settings: ServeSettings, client: OpenAIChatModel,
        process: ServerProcess | None = None, server: dict[str, Any] | None = None,
    ) -> None:  # fmt: skip
        public = {k: v for k, v in spec.options.items() if k not in ENGINE_OPTIONS | CLIENT_OPTIONS}
        self.spec = Spec(spec.name, spec.argument, public).canonical()
        self.settings = settings
        self.client = client
        self.deterministic = client.deterministic
        self.generation = client.generation
        self.max_tokens = client.max_tokens
        self.process = process
        self.server = server
        """run.json["server"]: command line, version, time to healthy, determinism settings."""

    @property
    def cache_identity(self) -> str:
        from medlens.runs.provenance import weights_key

        serving = {"args": list(self.settings.extra_args),
                   "batch_invariant": self.settings.batch_invariant}  # fmt: skip
        return weights_key(self.settings.folder) + ";serve=" + json.dumps(serving, sort_keys=True)

    async def generate(self, request: Request) -> Response:
        return await self.client.generate(request)

    async def aclose(self) -> None:
        try:
            await self.client.aclose()
        finally:
            if self.process is not None:
                await asyncio.to_thread(self.process.stop)


def start(settings: ServeSettings) -> tuple[ServerProcess, dict[str, Any]]:
    """Start the server, wait until it is healthy and serves the name asked for; its record."""
    port = settings.numbers["port"] or free_port()
    env = {"VLLM_BATCH_INVARIANT": "1"} if settings.batch_invariant else {}
    argv = server_arguments(settings, port)
    process = ServerProcess("vllm-serve", argv, env, f"http://127.0.0.1:{port}")
    try:
        waited = process.wait_healthy(float(settings.numbers["startup_timeout"]))
        version, served = _describe(process.base_url)
        if settings.served_name not in served:
            process.stop()
            raise SpecError(
                f"vllm-serve: the server serves {', '.join(served) or 'no model'}, not "
                f"{settings.served_name!r}; stopped it"
            )
    except BaseException:
        process.stop()  # idempotent: also on Ctrl-C while waiting
        raise
    record = {"command": argv, "environment": env, "version": version,
              "seconds_to_healthy": round(waited, 3), "base_url": process.base_url + "/v1"}  # fmt: skip
    return process, record


def _describe(base_url: str) -> tuple[str | None, list[str]]:
    """The server's version (``GET /version``) and the model ids it serves (``/v1/models``)."""
    with httpx.Client(timeout=httpx.Timeout(10.0)) as client:
        try:
            version = client.get(base_url + "/version").json().get("version")
        except (httpx.HTTPError, ValueError, AttributeError):
            version = None
        try:
            entries = client.get(base_url + "/v1/models").json().get("data") or []
            served = [str(entry.get("id")) for entry in entries if isinstance(entry, dict)]
        except (httpx.HTTPError, ValueError, AttributeError):
            served = []
    return (str(version) if version is not None else None), served


def determinism(settings: ServeSettings, client: OpenAIChatModel) -> dict[str, Any]:
    """What makes the served answers reproducible, as run.json records it."""
    body = client.settings.body_defaults
    return {
        "temperature": body.get("temperature"),
        "request_seed": body.get("seed"),
        "engine_seed": settings.numbers["engine_seed"],
        "batch_invariant": settings.batch_invariant,
        "generation_config": (
            "the model's generation_config.json fills what a request leaves out (vLLM's "
            "default; args='--generation-config vllm' turns it off)"
            if "--generation-config" not in settings.extra_args
            else "as given in args"
        ),
    }


def make_vllm_serve(spec: Spec, context: ModelContext) -> VLLMServeModel:
    """Factory for ``vllm-serve:MODEL_DIR?max_tokens=&temperature=&seed=&startup_timeout=…``:
    every option is checked before the server starts (a start takes minutes)."""
    settings = parse_serve(spec)
    options = {k: v for k, v in spec.options.items() if k in REQUEST_OPTIONS | CLIENT_OPTIONS}
    concurrency = int(context.concurrency or 128)
    unstarted = _openai(settings, options, "http://127.0.0.1:0/v1", context)
    if context.describe_only:
        return VLLMServeModel(spec, settings, OpenAIChatModel(*unstarted, concurrency))
    process, record = start(settings)
    try:
        client = OpenAIChatModel(
            *_openai(settings, options, record["base_url"], context), concurrency
        )
    except BaseException:
        process.stop()
        raise
    record["determinism"] = determinism(settings, client)
    return VLLMServeModel(spec, settings, client, process, record)


def _openai(
    settings: ServeSettings, options: dict[str, str], base_url: str, context: ModelContext
) -> tuple[Spec, OpenAISettings]:
    """The ``openai:`` spec and settings that reach the served model (checked)."""
    openai_spec = Spec("openai", settings.served_name, {**options, "base_url": base_url})
    try:
        return openai_spec, parse_openai(openai_spec, context.params)
    except SpecError as exc:
        raise SpecError(str(exc).replace("openai:", "vllm-serve:", 1)) from None
