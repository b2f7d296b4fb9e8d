"""The ``subset.json`` sidecar beside a benchmark file that ``medlens subset`` wrote.

``medlens subset`` (builder) writes it; a run on the file reads it here to record where its items
came from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from medlens.core.specs import Spec

SIDECAR = "subset.json"
TSV_LOADERS = ("gmai", "vlmeval")


def recorded_subset(spec: Spec, content_hash: str) -> dict[str, Any] | None:
    """The ``subset.json`` of a benchmark file, when it describes exactly these items."""
    if spec.name not in (*TSV_LOADERS, "jsonl") or not spec.argument:
        return None
    path = Path(os.path.abspath(os.path.expanduser(spec.argument)))
    sidecar = path.parent / SIDECAR
    try:
        content = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(content, dict) or content.get("output") != path.name:
        return None
    if content.get("content_hash") != content_hash:
        return None
    return {k: content[k] for k in ("n_items", "source", "recipe", "design") if k in content}
