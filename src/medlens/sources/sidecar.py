"""The ``subset.json`` sidecar beside a benchmark file that ``medlens subset`` wrote.

``medlens subset`` (builder) writes it; a run on the file reads it here to record where its items
came from.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
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
    found = {k: content[k] for k in ("n_items", "source", "recipe") if k in content}
    if isinstance(content.get("design"), dict):
        found["design"] = compact_design(content["design"])
    return found


def layout_hash(strata: Any) -> str:
    """sha256 of a design's population layout (every stratum's units and their items)."""
    text = json.dumps(strata, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def compact_design(design: dict[str, Any]) -> dict[str, Any]:
    """A design as a run records it (run.json and results.json's ``spec.subset.design``): per
    stratum its sizes and only its drawn units with their items, and ``layout``: the hash of the
    whole population layout, which stays in ``subset.json`` beside the subset file (read only
    for an estimate by axis). About 1 MB less per run at 26,000 items (bench/design_record.py).
    A design already compact is returned as it is."""
    strata = design.get("strata")
    if not isinstance(strata, dict) or "layout" in design:
        return design
    compact = {}
    for key, stratum in strata.items():
        units = stratum.get("units") or {}
        drawn = {unit: units[unit] for unit in stratum.get("sampled", []) if unit in units}
        compact[key] = {**{k: v for k, v in stratum.items() if k != "units"}, "units": drawn}
    return {**design, "strata": compact, "layout": {"sha256": layout_hash(strata)}}


def with_compact_design(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A run spec whose subset design is compacted (a run recorded before designs were compact
    resumes under the spec a new run records)."""
    subset = spec.get("subset")
    if not isinstance(subset, Mapping) or not isinstance(subset.get("design"), dict):
        return dict(spec)
    return {**spec, "subset": {**subset, "design": compact_design(subset["design"])}}
