"""Which files hold which config and split of a Hugging Face dataset folder.

Three layouts are read, in this order:

- ``datasets.save_to_disk`` output: ``dataset_dict.json`` (one sub-folder per split) or one
  split's ``state.json`` + ``dataset_info.json`` beside its ``data-*.arrow`` files.
- A dataset repository (cloned, or a Hub-cache snapshot) whose card (``README.md``) declares
  ``configs:`` in its YAML header: each config's ``data_files`` (a path/glob, a list, or a list of
  ``{split, path}``) relative to the folder.
- Otherwise the Hub's default naming: every ``*.parquet`` / ``*.arrow`` file, its split the first
  split word (train, test, validation, …) in its path (``data/test-00000-of-00001.parquet``,
  ``test/0000.parquet``), its config the top folder when that is neither ``data`` nor a split.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError

TABLE_SUFFIXES = (".parquet", ".arrow")
SPLIT_WORDS = {"train": "train", "training": "train", "test": "test", "testing": "test",
               "eval": "test", "evaluation": "test", "validation": "validation",
               "valid": "validation", "val": "validation", "dev": "validation"}  # fmt: skip
"""File-name words the Hub reads as a split, and the split each names (the Hub's own rule)."""
_WORD = re.compile(r"[A-Za-z]+")


@dataclass(frozen=True)
class Layout:
    """Config → split → table files (in read order)."""

    kind: str
    """``save_to_disk``, ``card`` (the README's ``configs:``) or ``files`` (default naming)."""
    configs: dict[str, dict[str, list[Path]]] = field(default_factory=dict)


def read_layout(root: Path) -> Layout:
    if (root / "dataset_dict.json").is_file():
        return Layout("save_to_disk", {"default": _saved_splits(root)})
    if (root / "state.json").is_file():
        split = _saved_split_name(root)
        return Layout("save_to_disk", {"default": {split: _saved_files(root)}})
    card = card_configs(root)
    if card:
        return Layout("card", card)
    return Layout("files", _default_configs(root))


def choose(layout: Layout, root: Path, config: str | None, split: str | None,
           default_split: str = "test") -> tuple[str, str, list[Path]]:  # fmt: skip
    """The config, split and files the options ask for, or one line naming the known ones."""
    if not layout.configs:
        raise InputError(root, None, "no dataset files found (looked for README.md configs:, "
                         "dataset_dict.json, state.json, *.parquet, *.arrow)")  # fmt: skip
    configs = layout.configs
    if config is None:
        config = "default" if "default" in configs or len(configs) != 1 else next(iter(configs))
        if config not in configs:
            raise SpecError(f"hfds:{root}: several configs, choose one with ?config= "
                            f"(known configs: {', '.join(sorted(configs))})")  # fmt: skip
    if config not in configs:
        raise SpecError(
            f"hfds:{root}: no config {config!r} (known configs: {', '.join(sorted(configs))})"
        )
    splits = configs[config]
    if split is None:
        split = default_split if default_split in splits else next(iter(splits))
        if len(splits) > 1 and default_split not in splits:
            raise SpecError(f"hfds:{root}: no {default_split} split, choose one with ?split= "
                            f"(known splits: {', '.join(splits)})")  # fmt: skip
    if split not in splits:
        raise SpecError(f"hfds:{root}: no split {split!r} in config {config!r} "
                        f"(known splits: {', '.join(splits)})")  # fmt: skip
    return config, split, splits[split]


def card_configs(root: Path) -> dict[str, dict[str, list[Path]]]:
    """The ``configs:`` of the dataset card's YAML header (empty when it declares none)."""
    header = card_header(root)
    out: dict[str, dict[str, list[Path]]] = {}
    for entry in header.get("configs") or []:
        if not isinstance(entry, dict) or "data_files" not in entry:
            continue
        name = str(entry.get("config_name", "default"))
        out[name] = _card_data_files(root, entry["data_files"])
    return out


def card_header(root: Path) -> dict[str, Any]:
    """The YAML header of ``README.md`` (empty when there is none)."""
    import yaml

    card = root / "README.md"
    if not card.is_file():
        return {}
    text = card.read_text(encoding="utf-8", errors="replace")
    match = re.match(r"\A---\s*\n(.*?)\n---\s*(\n|\Z)", text, re.DOTALL)
    if not match:
        return {}
    try:
        header = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise InputError(
            card, None, f"YAML header cannot be read ({str(exc).splitlines()[0]})"
        ) from None
    return header if isinstance(header, dict) else {}


def _card_data_files(root: Path, spec: Any) -> dict[str, list[Path]]:
    if isinstance(spec, (str, list)) and not (
        isinstance(spec, list) and spec and isinstance(spec[0], dict)
    ):
        patterns = [spec] if isinstance(spec, str) else [str(p) for p in spec]
        return {"train": _glob(root, patterns)}
    splits: dict[str, list[Path]] = {}
    for entry in spec if isinstance(spec, list) else []:
        if isinstance(entry, dict) and "split" in entry:
            paths = entry.get("path", [])
            patterns = [paths] if isinstance(paths, str) else [str(p) for p in paths]
            splits[str(entry["split"])] = _glob(root, patterns)
    return splits


def _glob(root: Path, patterns: list[str]) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        found.extend(sorted(p for p in root.glob(pattern) if p.is_file()))
    return found


def _default_configs(root: Path) -> dict[str, dict[str, list[Path]]]:
    configs: dict[str, dict[str, list[Path]]] = {}
    files = sorted(p for p in root.rglob("*") if p.suffix in TABLE_SUFFIXES and p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))  # fmt: skip
    for path in files:
        parts = path.relative_to(root).parts
        split = _split_word(parts)
        if split is None:
            continue
        top = parts[0] if len(parts) > 1 else "default"
        config = "default" if top in ("data", *SPLIT_WORDS) else top
        configs.setdefault(config, {}).setdefault(split, []).append(path)
    return configs


def _split_word(parts: tuple[str, ...]) -> str | None:
    for part in parts:
        for word in _WORD.findall(Path(part).stem if part == parts[-1] else part):
            if word.lower() in SPLIT_WORDS:
                return SPLIT_WORDS[word.lower()]
    return None


def _saved_splits(root: Path) -> dict[str, list[Path]]:
    try:
        names = json.loads((root / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            root / "dataset_dict.json", None, f'expected {{"splits": [...]}} ({exc})'
        ) from None
    return {str(name): _saved_files(root / str(name)) for name in names}


def _saved_split_name(root: Path) -> str:
    state = _read_state(root)
    return str(state.get("_split") or "train")


def _read_state(root: Path) -> dict[str, Any]:
    try:
        state = json.loads((root / "state.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(root / "state.json", None, f"cannot read ({exc})") from None
    return state if isinstance(state, dict) else {}


def _saved_files(folder: Path) -> list[Path]:
    state = _read_state(folder)
    names = [
        entry.get("filename") for entry in state.get("_data_files") or [] if isinstance(entry, dict)
    ]
    files = [folder / str(name) for name in names if name]
    if not files:
        files = sorted(folder.glob("*.arrow"))
    for path in files:
        if not path.is_file():
            raise InputError(folder / "state.json", None, f"lists {path.name}, which is missing")
    return files
