"""The answer-length cap and the image handling a model spec implies, said in words for the
protocol card and the truncation warning (issue 23: reasoning models lose 19–37% of their
answers to the token cap in peers' runs, with exit 0, because nobody printed the cap)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medlens.core.specs import Spec

NO_GENERATION = ("random", "first", "prior", "oracle", "replay")


def max_tokens_text(spec: Spec, params: Mapping[str, Any] | None = None) -> str:
    """``64``, ``64 (hf default)``, ``the server's default (not set)``, or why none applies."""
    params = params or {}
    if spec.name in NO_GENERATION:
        return "not applicable (no generation)"
    if spec.name == "hf":
        from medlens.models.hf import HFSettings

        given = spec.option("max_new_tokens") or params.get("max_tokens")
        return str(given) if given else f"{HFSettings.max_new_tokens} (hf default)"
    if spec.name == "vllm":
        from medlens.models.vllm import INT_OPTIONS

        given = spec.option("max_tokens") or params.get("max_tokens")
        return str(given) if given else f"{INT_OPTIONS['max_tokens']} (vllm default)"
    given = spec.option("max_tokens") or params.get("max_tokens")
    return str(given) if given else "the server's default (max_tokens not set)"


def image_handling_text(spec: Spec, prompt: str) -> str:
    """How images reach the model: as stored, MMBU's padding, an API detail level."""
    if spec.name in NO_GENERATION:
        return "not sent (the model reads no pixels)"
    sent = (
        "padded with black on the right and bottom to 512 px per side when smaller, never "
        "resized (MMBU's pad_to_512)"
        if prompt == "mmbu"
        else "sent as stored (no resizing, no lossy re-encoding)"
    )
    detail = spec.option("image_detail") if spec.name == "openai" else None
    return sent + (f"; image_detail={detail}" if detail else "")
