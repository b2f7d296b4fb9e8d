"""The one symlink policy of every loader: an image must resolve inside its dataset root.

A benchmark file (or a symlink planted in a dataset folder) must not make medlens read a file
elsewhere on the machine and send it to a model server.
"""

from __future__ import annotations

import os
from pathlib import Path

from medlens.core.errors import InputError


def resolve_inside(root: Path | str, relative: str, source: object, where: str | None) -> Path:
    """`root/relative` with every symlink resolved; InputError when that leaves `root`."""
    real_root = os.path.realpath(root)
    resolved = os.path.realpath(os.path.join(real_root, relative))
    if os.path.commonpath([real_root, resolved]) != real_root:
        problem = f"image path {relative!r} resolves outside the folder {real_root} of the dataset"
        raise InputError(source, where, problem)
    return Path(resolved)
