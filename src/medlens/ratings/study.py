"""A study: one exported sheet's protocol, items and (for side-by-side studies) its unblinding key.

Kept in the run directory (``ratings/studies/<id>.json``), never in the sheet; the sheet carries
only the study id, so an import finds its protocol, its items and its key from the run alone.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from medlens.core.errors import InputError, MedlensError
from medlens.core.items import Item
from medlens.ratings.protocols import RatingProtocol
from medlens.runs.files import canonical_json
from medlens.runs.ratings import has_study, study_file, study_json, write_study
from medlens.runs.view import RunView

StudyKind = Literal["rating", "pairwise", "errors", "answer"]


@dataclass(frozen=True)
class Study:
    id: str
    kind: StudyKind
    name: str
    """Ratings land in ``ratings/<name>.jsonl``."""
    protocol: RatingProtocol
    items: Sequence[str]
    """Item ids in sheet order."""
    seed: int
    extra: dict[str, Any] = field(default_factory=dict)
    """pairwise: run_b, spec hashes, key {id: "AB"|"BA"}; errors: stratify, categories; judge."""

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "id": self.id, "kind": self.kind, "name": self.name,
                "protocol": self.protocol.to_json(), "items": list(self.items), "seed": self.seed,
                "extra": self.extra}  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Study:
        return cls(data["id"], data["kind"], data["name"],
                   RatingProtocol.from_json(data["protocol"]), list(data["items"]),
                   int(data["seed"]), dict(data.get("extra") or {}))  # fmt: skip


def study_id(store: RunView, kind: str, what: Any, seed: int, sample: int) -> str:
    """Deterministic: exporting the same study twice gives the same id (and the same sheet)."""
    text = canonical_json([store.run.get("spec_hash"), kind, what, seed, sample])
    return f"{kind[0]}{hashlib.sha256(text.encode()).hexdigest()[:12]}"


def save_study(run_dir: Path, study: Study) -> None:
    write_study(run_dir, study.id, study.to_json())


def load_study(run_dir: Path, wanted: str, sheet: Path, row: int) -> Study:
    """The study a sheet row names; a study of another run is an input error at that cell."""
    path = study_file(run_dir, wanted)
    if not has_study(run_dir, wanted):
        problem = (f"study {wanted!r} was not exported from run {run_dir}"
                   " (a side-by-side sheet is imported into its first run, RUN_A)")  # fmt: skip
        raise InputError(sheet, f"row {row}, column 'study'", problem)
    try:
        return Study.from_json(study_json(path))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise MedlensError(f"{path}: unreadable study file ({exc})") from None


def check_sample(sample: int) -> None:
    if sample < 1:
        raise MedlensError(f"--sample must be at least 1, got {sample}")


def seeded_sample(ids: Sequence[str], sample: int, seed: int) -> list[str]:
    """``sample`` ids (all if fewer), in a seeded random order."""
    pool = sorted(ids)
    return random.Random(seed).sample(pool, min(sample, len(pool)))


def answered_items(store: RunView) -> tuple[list[Item], dict[str, dict[str, Any]]]:
    """Items with a model answer (records without error), and the records."""
    records = store.records()
    items = [i for i in store.items() if i.id in records and records[i.id].get("error") is None
             and records[i.id].get("output") is not None]  # fmt: skip
    return items, records


def question_text(item: Item) -> str:
    lines = [item.context or "", item.question]
    lines += [f"{letter}. {text}" for letter, text in item.options.items()]
    return "\n".join(line for line in lines if line)


def gold_text(item: Item) -> str | None:
    if item.answer is None:
        return None
    if item.options and isinstance(item.answer, str):
        texts = [f"{c}. {item.options[c]}" for c in item.answer if c in item.options]
        return "; ".join(texts) if texts else item.answer
    return str(item.answer)


def image_names(item: Item) -> str:
    return ", ".join(image.name or image.path or "" for image in item.images)
