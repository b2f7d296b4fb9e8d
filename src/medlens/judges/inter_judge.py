"""Agreement between the judges of one run, in results.json: which judges can be compared, and
which cannot because one repeats the other's cached replies (say why instead of a κ of 1)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from medlens.judges.combine import protocol_kind
from medlens.judges.verdicts import inter_judge_agreement
from medlens.runs.judgements import JudgeStore, judges_dir


def comparable_judges(run_dir: Path, judged: dict[str, Any]) -> list[list[str]]:
    """Groups of two or more judges that rate the same dimensions (equivalence and mmbu judges
    with each other, rubric judges with each other): only those have an agreement to report."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for name in sorted(judged):
        spec = JudgeStore.open(judges_dir(run_dir) / name).spec
        kind = protocol_kind(spec)
        if kind == "choice":  # letters, not ratings: agreement is not defined
            continue
        key = ("binary" if kind in ("equivalence", "mmbu") else kind,
               *spec["protocol"].get("dimensions", []))  # fmt: skip
        groups.setdefault(key, []).append(name)
    return [names for names in groups.values() if len(names) >= 2]


def add_inter_judge(run_dir: Path, judged: dict[str, Any]) -> None:
    """Put ``inter_judge`` (the agreement of a group) on each judge it covers, and
    ``inter_judge_note`` on a judge left out for being a cached copy of another."""
    for names in comparable_judges(run_dir, judged):
        agreement = inter_judge_agreement(run_dir, names)
        for note in agreement.pop("not_computed", []):
            copy = re.match(r"agreement of (\S+) with", note)
            if copy is not None and copy.group(1) in judged:
                judged[copy.group(1)]["inter_judge_note"] = note
        if agreement.get("dimensions"):
            for name in agreement["judges"]:
                judged[name]["inter_judge"] = agreement
