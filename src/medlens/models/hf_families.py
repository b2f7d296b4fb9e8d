"""The transformers families ``hf:`` has verified, and each one's image-resolution setting.

How many pixels a model sees is the setting users most often get wrong, and each family spells it
differently: Qwen-VL bounds the pixel count (``min_pixels``/``max_pixels``), LLaVA-NeXT and
OneVision choose a grid of crops from a list (``max_pixels`` drops the larger grids), InternVL cuts
tiles (``max_tiles``), Idefics3/SmolVLM resize the longest edge (``longest_edge``). LLaVA-1.5,
Gemma 3 and Llama 3.2 Vision see a size fixed by their weights: Mllama's aspect-ratio embeddings are
trained for its tile count, so changing it would silently shift them (medlens refuses).

Each family's setting is read from the processor the checkpoint ships, changed only when the spec
asks (checked against the family's minimum), and reported as it is in effect: the run records it
(``run.json["image_settings"]``) and the response cache keys on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from medlens.core.errors import SpecError

RESOLUTION_OPTIONS = ("min_pixels", "max_pixels", "max_tiles", "longest_edge")


@dataclass(frozen=True)
class Family:
    """One verified family: the ``model_type`` values it serves and its resolution options."""

    name: str
    model_types: tuple[str, ...]
    options: tuple[str, ...]
    """The resolution options it takes (empty: fixed by the weights)."""
    read: Callable[[Any, Any], dict[str, Any]]
    """(image processor, model config) → the resolution in effect."""
    apply: Callable[[Any, Any, Mapping[str, int]], None]
    """Change the resolution as the spec asks (already checked by ``check``)."""
    check: Callable[[dict[str, Any], Mapping[str, int]], str | None]
    """(resolution in effect, what the spec asks) → why it cannot be, or None."""
    fixed_because: str = ""


def _size(processor: Any, **changes: int) -> None:
    size = processor.size
    if dataclasses.is_dataclass(size):
        processor.size = dataclasses.replace(size, **changes)  # type: ignore[type-var]
    else:
        processor.size = {**dict(size), **changes}


def _edge(size: Any, key: str) -> Any:
    return size.get(key) if isinstance(size, Mapping) else getattr(size, key, None)


# Qwen2-VL, Qwen2.5-VL, Qwen3-VL: the pixel count is bounded, in patches of (patch × merge)².
def _read_qwen(processor: Any, config: Any) -> dict[str, Any]:
    factor = int(processor.patch_size) * int(processor.merge_size)
    return {"min_pixels": int(_edge(processor.size, "shortest_edge")),
            "max_pixels": int(_edge(processor.size, "longest_edge")), "patch": factor}  # fmt: skip


def _apply_qwen(processor: Any, config: Any, asked: Mapping[str, int]) -> None:
    changes = {"shortest_edge": asked.get("min_pixels"), "longest_edge": asked.get("max_pixels")}
    _size(processor, **{key: value for key, value in changes.items() if value is not None})


def _check_qwen(now: dict[str, Any], asked: Mapping[str, int]) -> str | None:
    low = asked.get("min_pixels", now["min_pixels"])
    high = asked.get("max_pixels", now["max_pixels"])
    one_token = now["patch"] ** 2
    if high < one_token:
        return (
            f"max_pixels={high} is below the family's minimum of {one_token} "
            f"(one {now['patch']}×{now['patch']} patch)"
        )
    if low > high:
        return f"min_pixels={low} is above max_pixels={high}"
    return None


# LLaVA-NeXT / OneVision: the image is fitted to one grid of crops from a list.
def _read_grid(processor: Any, config: Any) -> dict[str, Any]:
    grid = [list(map(int, pair)) for pair in processor.image_grid_pinpoints]
    return {"max_pixels": max(h * w for h, w in grid), "grid": grid}


def _apply_grid(processor: Any, config: Any, asked: Mapping[str, int]) -> None:
    kept = [pair for pair in _read_grid(processor, config)["grid"]
            if pair[0] * pair[1] <= asked["max_pixels"]]  # fmt: skip
    # the processor counts image tokens from its grid, the model splits features by its own:
    # both must hold the same list
    processor.image_grid_pinpoints = kept
    config.image_grid_pinpoints = kept


def _check_grid(now: dict[str, Any], asked: Mapping[str, int]) -> str | None:
    smallest = min(h * w for h, w in now["grid"])
    if "max_pixels" in asked and asked["max_pixels"] < smallest:
        return (
            f"max_pixels={asked['max_pixels']} is below the family's minimum of {smallest} "
            "(its smallest grid of crops)"
        )
    return None


# InternVL: 448-px tiles (as many as fit the aspect ratio, up to max_tiles) plus a thumbnail.
def _read_tiles(processor: Any, config: Any) -> dict[str, Any]:
    tile = f"{_edge(processor.size, 'height')}x{_edge(processor.size, 'width')}"
    return {"tile": tile, "min_tiles": int(processor.min_patches),
            "max_tiles": int(processor.max_patches)}  # fmt: skip


def _apply_tiles(processor: Any, config: Any, asked: Mapping[str, int]) -> None:
    processor.max_patches = asked["max_tiles"]


def _check_tiles(now: dict[str, Any], asked: Mapping[str, int]) -> str | None:
    if "max_tiles" in asked and asked["max_tiles"] < max(1, now["min_tiles"]):
        return f"max_tiles={asked['max_tiles']} is below the family's minimum of {max(1, now['min_tiles'])}"
    return None


# Idefics3 / SmolVLM: resized to a longest edge, then cut in square tiles of max_image_size.
def _read_edge(processor: Any, config: Any) -> dict[str, Any]:
    tile = _edge(processor.max_image_size, "longest_edge")
    return {"longest_edge": int(_edge(processor.size, "longest_edge")), "tile": int(tile)}


def _apply_edge(processor: Any, config: Any, asked: Mapping[str, int]) -> None:
    _size(processor, longest_edge=asked["longest_edge"])


def _check_edge(now: dict[str, Any], asked: Mapping[str, int]) -> str | None:
    if "longest_edge" in asked and asked["longest_edge"] < now["tile"]:
        return (
            f"longest_edge={asked['longest_edge']} is below the family's minimum of "
            f"{now['tile']} (one tile)"
        )
    return None


# Fixed by the weights.
def _read_fixed(processor: Any, config: Any) -> dict[str, Any]:
    size = getattr(processor, "crop_size", None) or processor.size
    side = f"{_edge(size, 'height')}x{_edge(size, 'width')}"
    tiles = getattr(processor, "max_image_tiles", None)
    if tiles is None:
        return {"size": side}
    return {"tile": side, "max_tiles": int(tiles)}


def _apply_nothing(processor: Any, config: Any, asked: Mapping[str, int]) -> None:
    return None


def _check_nothing(now: dict[str, Any], asked: Mapping[str, int]) -> str | None:
    return None


_QWEN = (_read_qwen, _apply_qwen, _check_qwen)
_GRID = (_read_grid, _apply_grid, _check_grid)
_FIXED = (_read_fixed, _apply_nothing, _check_nothing)

FAMILIES = (
    Family("Qwen2-VL", ("qwen2_vl",), ("min_pixels", "max_pixels"), *_QWEN),
    Family("Qwen2.5-VL", ("qwen2_5_vl",), ("min_pixels", "max_pixels"), *_QWEN),
    Family("Qwen3-VL", ("qwen3_vl",), ("min_pixels", "max_pixels"), *_QWEN),
    Family("InternVL", ("internvl",), ("max_tiles",), _read_tiles, _apply_tiles, _check_tiles),
    Family("Idefics3", ("idefics3",), ("longest_edge",), _read_edge, _apply_edge, _check_edge),
    Family("SmolVLM", ("smolvlm",), ("longest_edge",), _read_edge, _apply_edge, _check_edge),
    Family("LLaVA-NeXT", ("llava_next",), ("max_pixels",), *_GRID),
    Family("LLaVA-OneVision", ("llava_onevision",), ("max_pixels",), *_GRID),
    Family("Llama 3.2 Vision", ("mllama",), (), *_FIXED,
           fixed_because="its aspect-ratio embeddings are trained for the checkpoint's tiles"),
    Family("LLaVA", ("llava",), (), *_FIXED, fixed_because="its vision tower has one input size"),
    Family("Gemma 3", ("gemma3",), (), *_FIXED,
           fixed_because="its vision tower has one input size"),
)  # fmt: skip
BY_MODEL_TYPE = {model_type: family for family in FAMILIES for model_type in family.model_types}


def verified_names() -> str:
    return ", ".join(family.name for family in FAMILIES)


def family_of(config: Mapping[str, Any], where: str) -> Family | None:
    """The verified family of a checkpoint's ``config.json`` (None: not a verified one); a
    text-only checkpoint is refused here, whatever the caller allows."""
    model_type = str(config.get("model_type") or "")
    family = BY_MODEL_TYPE.get(model_type)
    if family is None and "vision_config" not in config:
        raise SpecError(
            f"hf: {where} holds a text-only model ({model_type or 'no model_type'}, no vision "
            f"tower); hf: serves vision-language checkpoints ({verified_names()})"
        )
    return family


def check_resolution_options(family: Family | None, asked: Mapping[str, int], where: str) -> None:
    """Refuse a resolution option the family does not have, naming the ones it has."""
    for option in asked:
        if family is None:
            raise SpecError(
                f"hf: option {option}: {where} is not a verified family, so medlens does not "
                "know how it sets the image resolution"
            )
        if option not in family.options:
            has = (
                f"its setting is {' / '.join(family.options)}"
                if family.options
                else f"its resolution is fixed: {family.fixed_because}"
            )
            raise SpecError(f"hf: option {option} does not apply to {family.name} ({has})")


def settle_resolution(
    family: Family, image_processor: Any, config: Any, asked: Mapping[str, int], where: str
) -> dict[str, Any]:
    """Apply what the spec asks (after checking it against the family's minimum) and return
    the resolution now in effect."""
    now = family.read(image_processor, config)
    problem = family.check(now, asked)
    if problem:
        raise SpecError(f"hf: {where}: {problem}")
    if asked:
        family.apply(image_processor, config, asked)
    return family.read(image_processor, config)
