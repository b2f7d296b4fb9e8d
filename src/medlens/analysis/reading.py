"""medlens's reading of a run scored with another reading (``--extract vlmeval``, a peer's):
the other side of its extraction sensitivity, kept as the run's ``reading`` artifact
(``derived/reading.medlens.rules.json``: item id → medlens's score of its answer).

It is built from the run's items and records alone (not its judges), so a judge stage, which
makes the results stale, leaves it fresh: rebuilding the results reads it back instead of
re-reading every answer (0.6 s CPU for 26,000 GMAI answers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.artifacts import (
    RULES,
    STAMP,
    Artifact,
    Stamped,
    Variant,
    derived_place,
)
from medlens.runs.layout import RUN_INPUTS

MEDLENS_READING = Variant("medlens", RULES)
"""The one variant of :data:`READING`."""


def medlens_reading(items: Sequence[Item], records: dict[str, Record]) -> dict[str, float | None]:
    """Each scored item's score under medlens's extraction (None where its rules give none),
    for a run scored with another ``--extract`` (VLMEvalKit's or a peer's): re-read from the
    stored outputs, so the extraction sensitivity is shown in both modes."""
    from medlens.extract import extract
    from medlens.scoring.item_scores import score

    out: dict[str, float | None] = {}
    for item in items:
        record = records.get(item.id)
        if record is None or record.get("error") is not None or record.get("score") is None:
            continue
        found = extract(item, record.get("output"), "medlens", record.get("finish_reason"))
        out[item.id] = score(item, found)
    return out


def _stamped(path: Path) -> Stamped | None:
    from medlens.runs.files import loads_line

    try:
        data = loads_line(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("scores"), dict):
        return None
    return data.get(STAMP), data


def _load(view: Any, path: Path, data: dict[str, Any]) -> dict[str, float | None]:
    scores: dict[str, float | None] = data["scores"]
    return scores


def _encode(scores: Mapping[str, float | None], stamp: dict[str, Any]) -> bytes:
    return (json.dumps({"scores": scores, STAMP: stamp}, ensure_ascii=False) + "\n").encode()


def _build(view: Any, variant: Variant) -> dict[Artifact, Any]:
    return {READING: medlens_reading(view.items(), view.records())}


READING = Artifact(
    name="reading",
    inputs=RUN_INPUTS,
    place=derived_place("reading", "json"),
    stamped=_stamped,
    load=_load,
    encode=_encode,
    attach=lambda scores, stamp: scores,
    build=_build,
)
