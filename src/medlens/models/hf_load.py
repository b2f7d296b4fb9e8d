"""Loading an ``hf:`` checkpoint: its family checked first, its processor (without the video
half when torchvision is missing), its image resolution settled, then the weights.

Everything a folder can get wrong is refused in one line before the weights load: no
``config.json``, a text-only model, a family medlens has not verified (unless ``unverified=true``),
no processor, no chat template, a processor whose image token is not the model's.
"""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.models.hf_families import (
    Family,
    check_resolution_options,
    family_of,
    settle_resolution,
    verified_names,
)

PROCESSOR_FILES = ("processor_config.json", "preprocessor_config.json")


@dataclass(frozen=True)
class Checkpoint:
    """What a folder holds, read from its JSON files (no torch, no weights)."""

    path: str
    config: Mapping[str, Any]
    family: Family | None
    """None: a vision-language model of a family medlens has not verified."""

    @property
    def family_name(self) -> str:
        if self.family is not None:
            return self.family.name
        return f"unverified ({self.config.get('model_type')})"


def is_local(path: str) -> bool:
    return path.startswith(("/", ".", "~")) or os.path.isdir(path)


def read_config(path: str) -> dict[str, Any]:
    """``config.json`` of a local folder, or of a model in the local Hub cache."""
    if is_local(path):
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise SpecError(f"hf: no model folder at {path}")
        file = folder / "config.json"
        if not file.is_file():
            raise SpecError(f"hf: {path} has no config.json (not a transformers checkpoint folder)")
        try:
            value = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SpecError(f"hf: {file}: not readable JSON ({exc})") from None
    else:
        from transformers import PretrainedConfig

        try:
            value, _ = PretrainedConfig.get_config_dict(path, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise SpecError(f"hf: cannot read the config of {path} ({first_line(exc)})") from None
    if not isinstance(value, dict):
        raise SpecError(f"hf: {path}/config.json is not a JSON object")
    return value


def inspect_checkpoint(path: str, asked: Mapping[str, int], unverified: bool) -> Checkpoint:
    """The family of the checkpoint at `path`, refusing what hf: cannot serve (JSON only)."""
    config = read_config(path)
    family = family_of(config, path)
    if family is None and not unverified:
        raise SpecError(
            f"hf: {path} holds a {config.get('model_type')!r} model, not a family medlens has "
            f"verified ({verified_names()}); add unverified=true to load it anyway (its image "
            "settings are then not checked)"
        )
    check_resolution_options(family, asked, path)
    if is_local(path):
        folder = Path(path).expanduser()
        if not any((folder / name).is_file() for name in PROCESSOR_FILES):
            raise SpecError(
                f"hf: {path} holds the weights of a {family.name if family else 'model'} but no "
                f"processor ({' or '.join(PROCESSOR_FILES)}): copy the processor files from "
                "the checkpoint's source"
            )
    return Checkpoint(path, config, family)


def load_processor(checkpoint: Checkpoint) -> Any:
    """The checkpoint's processor; without torchvision, the processor class minus its video
    processor (medlens sends images only, and the video half is what needs torchvision)."""
    import transformers
    from transformers import AutoProcessor
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES
    from transformers.utils import is_torchvision_available

    name = PROCESSOR_MAPPING_NAMES.get(str(checkpoint.config.get("model_type")))
    base: Any = getattr(transformers, name, None) if isinstance(name, str) else None
    try:
        video = base is not None and "video_processor" in base.get_attributes()
        if video and not is_torchvision_available():
            adapted: Any = image_only(base)
            return adapted.from_pretrained(checkpoint.path, local_files_only=True)
        return AutoProcessor.from_pretrained(checkpoint.path, local_files_only=True)
    except (OSError, ValueError, ImportError, TypeError, KeyError) as exc:
        raise SpecError(
            f"hf: cannot load the processor of {checkpoint.path} ({first_line(exc)})"
        ) from None


def image_only(base: Any) -> type:
    """`base` (a transformers processor class) without its ``video_processor`` attribute."""
    attributes = [a for a in base.get_attributes() if a != "video_processor"]
    takes_video = "video_processor" in inspect.signature(base.__init__).parameters

    def get_attributes(cls: type) -> list[str]:
        return list(attributes)

    def from_dict(cls: type, processor_dict: dict[str, Any], **kwargs: Any) -> Any:
        if takes_video:  # some processors take it positionally, without a default
            kwargs.setdefault("video_processor", None)
        parent: Any = super(adapted, cls)
        return parent.from_dict(processor_dict, **kwargs)

    adapted: Any = type(
        base.__name__,
        (base,),
        {
            "get_attributes": classmethod(get_attributes),
            "from_dict": classmethod(from_dict),
            # SmolVLM's apply_chat_template reads the video frame settings even for images
            "video_processor": NoVideo(),
        },
    )
    return adapted


class NoVideo:
    """Stands where an image-only processor's video processor would: no frame settings."""

    num_frames = None
    fps = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise SpecError("hf: videos need torchvision (medlens sends images only)")


def check_processor(checkpoint: Checkpoint, processor: Any) -> None:
    """A chat template, and the processor's image token the model's own."""
    tokenizer = getattr(processor, "tokenizer", None)
    if not getattr(processor, "chat_template", None) and not getattr(
        tokenizer, "chat_template", None
    ):
        raise SpecError(
            f"hf: {checkpoint.path} has no chat template (chat_template.jinja or the tokenizer's "
            "chat_template): a base checkpoint? medlens prompts instruction-tuned models"
        )
    expected = model_image_token(checkpoint.config)
    known = {getattr(processor, "image_token_id", None),
             *(getattr(processor, "image_token_ids", None) or ())} - {None}  # fmt: skip
    if expected is not None and known and expected not in known:
        token = getattr(processor, "image_token", "?")
        raise SpecError(
            f"hf: {checkpoint.path}: the processor's image token {token} has id "
            f"{', '.join(map(str, sorted(known)))}, the model expects id {expected}: the "
            "processor belongs to another checkpoint"
        )


def model_image_token(config: Mapping[str, Any]) -> int | None:
    """The id of the token the model replaces with image features (``config.json``)."""
    value = config.get("image_token_id", config.get("image_token_index"))
    return value if isinstance(value, int) else None


def settle_images(
    checkpoint: Checkpoint, processor: Any, model_config: Any, asked: Mapping[str, int]
) -> dict[str, Any]:
    """The image settings in effect after the spec's changes: ``{"family", "resolution"}``."""
    if checkpoint.family is None:
        return {"family": checkpoint.family_name, "resolution": {}}
    image_processor = getattr(processor, "image_processor", processor)
    resolution = settle_resolution(
        checkpoint.family, image_processor, model_config, asked, checkpoint.path
    )
    return {"family": checkpoint.family.name, "resolution": resolution}


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
