"""Judge panels: several judges on one run, each with its own store under the panel, and the
panel's verdicts combined from theirs.

On disk: ``judges/<PANEL>/judge.json`` (``"panel": {"members", "combine"}``), each member's own
stage in ``judges/<PANEL>/members/<member>/``, and the panel's ``judgements.jsonl`` rewritten
after every stage from the members' lines (``by: "panel"``), so every reader of a judge (reports,
``judged_item_scores``, agreement, ``show``) reads a panel as one judge. Combination per item:
majority of the members' verdicts for binary protocols (a tie is *unresolved*: no score,
counted), mean for rubrics; members without a verdict on the item do not vote.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from medlens.judges.combine import BINARY, item_verdict
from medlens.runs.judgements import JudgeStore, member_folder, read_judge_json, rewrite_judgements
from medlens.runs.layout import is_judge_stage


def is_panel(spec: Mapping[str, Any]) -> bool:
    return isinstance(spec.get("panel"), Mapping)


def member_folders(panel_folder: Path, spec: Mapping[str, Any]) -> dict[str, Path]:
    """Member name → its stage folder, in the order the members were given."""
    return {m["name"]: member_folder(panel_folder, m["name"]) for m in spec["panel"]["members"]}


def panel_block(kind: str, members: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """The ``panel`` object of a panel's judge.json: members (name, judge spec) and the rule."""
    return {
        "members": [{"name": name, "judge": judge} for name, judge in members],
        "combine": "majority" if kind in BINARY else "mean",
    }


def _member_lines(store: JudgeStore) -> dict[str, list[dict[str, Any]]]:
    return dict(store.by_item())


def _panel_verdict(kind: str, votes: dict[str, float], dims: dict[str, list[float]]) -> Any:
    """(status, score, verdict) of one item from the members' scores."""
    cast = [v for v in votes.values() if not math.isnan(v)]
    if not cast:
        return "error", None, None
    mean = float(np.mean(cast))
    if kind not in BINARY:
        scores = {d: float(np.mean(v)) for d, v in dims.items() if v}
        return "ok", mean, {"scores": scores, "rationale": ""}
    if mean == 0.5:
        return "unresolved", None, None
    decided = mean > 0.5
    verdict: dict[str, Any] = {"equivalent": decided} if kind != "choice" else {}
    return "ok", 1.0 if decided else 0.0, verdict


def panel_line(
    item_id: str, kind: str, per_member: Mapping[str, list[dict[str, Any]]]
) -> dict[str, Any]:
    """The panel's judgements.jsonl line of one item from each member's lines of it."""
    if per_member and all(
        all(line.get("by") == "rule" for line in lines) for lines in per_member.values()
    ):
        return {**next(iter(per_member.values()))[0], "votes": {}}  # the rules settled it
    votes: dict[str, float] = {}
    dims: dict[str, list[float]] = {}
    for name, lines in per_member.items():
        votes[name] = item_verdict(kind, lines).score
        for line in lines:
            for dim, points in ((line.get("verdict") or {}).get("scores") or {}).items():
                if line.get("status") == "ok":
                    dims.setdefault(dim, []).append(float(points))
    status, score, verdict = _panel_verdict(kind, votes, dims)
    error = None
    if status == "unresolved":
        error = {"type": "unresolved", "message": "the members split evenly"}
    elif status == "error":
        error = {"type": "no_verdict", "message": "no member gave a verdict"}
    return {
        "id": item_id, "repeat": 0, "by": "panel", "fingerprint": None, "output": None,
        "status": status, "verdict": verdict, "score": score, "error": error,
        "failure": "unresolved" if status == "unresolved" else None,
        "latency": 0.0, "calls": 0, "usage": {}, "cached": False,
        "votes": {k: (None if math.isnan(v) else v) for k, v in votes.items()},
    }  # fmt: skip


def write_panel_lines(panel_folder: Path, kind: str) -> int:
    """Rewrite the panel's judgements.jsonl from its members' stores; the number of lines."""
    spec = read_judge_json(panel_folder)
    members = {
        name: _member_lines(JudgeStore.open(folder))
        for name, folder in member_folders(panel_folder, spec).items()
        if is_judge_stage(folder)
    }
    ids = sorted({item for lines in members.values() for item in lines})
    lines = [
        panel_line(item, kind, {m: by[item] for m, by in members.items() if item in by})
        for item in ids
    ]
    rewrite_judgements(panel_folder, lines)
    return len(lines)
