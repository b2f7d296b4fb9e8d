"""The one symlink policy of every loader: an image must resolve inside its dataset root.

A benchmark file (or a symlink planted in a dataset folder) must not make medlens read a file
elsewhere on the machine and send it to a model server. A Hugging Face cache snapshot
(``datasets--o--n/snapshots/<commit>``) is made of symlinks into its repo's ``blobs/``; for it
the boundary is the repo's cache folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from medlens.core.errors import InputError


def resolve_inside(root: Path | str, relative: str, source: object, where: str | None) -> Path:
    """`root/relative` with every symlink resolved; InputError when that leaves `root`."""
    real_root = os.path.realpath(root)
    resolved = os.path.realpath(os.path.join(real_root, relative))
    allowed = hub_repo_folder(real_root) or real_root
    if os.path.commonpath([allowed, resolved]) != allowed:
        problem = f"image path {relative!r} resolves outside the folder {real_root} of the dataset"
        raise InputError(source, where, problem)
    return Path(resolved)


def hub_repo_folder(real_root: str) -> str | None:
    """The repo cache folder of a folder inside a Hub-cache snapshot, else None."""
    for folder in (Path(real_root), *Path(real_root).parents):
        if folder.parent.name == "snapshots" and re.fullmatch(r"[0-9a-f]{40}", folder.name):
            return str(folder.parent.parent)
    return None
