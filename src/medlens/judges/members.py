"""A panel's entry in results.json: each member's own judged score and replies, the pairwise
agreement of the members, and how many items the panel left unresolved."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from medlens.judges.panel import member_folders
from medlens.judges.verdicts import inter_judge_agreement
from medlens.runs.judgements import JudgeStore
from medlens.runs.layout import is_judge_stage


def member_lines(panel_folder: Path, spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every judgement line of every member (the calls and replies the panel cost)."""
    lines: list[dict[str, Any]] = []
    for folder in member_folders(panel_folder, spec).values():
        if is_judge_stage(folder):
            lines.extend(JudgeStore.open(folder).lines().values())
    return lines


def panel_members(
    panel_folder: Path,
    spec: Mapping[str, Any],
    summarise: Callable[[JudgeStore], dict[str, Any]],
) -> dict[str, Any]:
    """``{"combine", "members": {name: {judge, overall, replies, position_bias}}, "agreement"}``;
    `summarise` is the per-judge entry builder (``results.judge_result``), passed in so this
    module needs nothing above the store."""
    members: dict[str, Any] = {}
    for name, folder in member_folders(panel_folder, spec).items():
        if not is_judge_stage(folder):
            continue
        entry = summarise(JudgeStore.open(folder))
        members[name] = {
            "judge": entry["judge"],
            "overall": entry["overall"],
            "replies": entry["replies"],
            "position_bias": entry.get("position_bias"),
            "self_judged": entry["self_judged"],
        }
    out: dict[str, Any] = {"combine": spec["panel"]["combine"], "members": members}
    names = [f"{panel_folder.name}/members/{name}" for name in members]
    if len(names) >= 2 and spec["protocol"]["name"] != "choice":
        agreement = inter_judge_agreement(panel_folder.parent.parent, names)
        prefix = f"{panel_folder.name}/members/"
        agreement["judges"] = [n.removeprefix(prefix) for n in agreement["judges"]]
        for stats in agreement["dimensions"].values():
            for pair in stats.get("pairs", []):
                pair["raters"] = [r.removeprefix(prefix) for r in pair["raters"]]
        agreement["not_computed"] = [
            note.replace(prefix, "") for note in agreement.get("not_computed", [])
        ]
        out["agreement"] = agreement
    return out
