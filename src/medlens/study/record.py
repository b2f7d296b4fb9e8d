"""``study.json``: the plan, the study file's hash and identity, and each run's and judge's state.

Written atomically by the scheduler (one writer: the study holds ``<study>/.lock`` while it
runs) whenever a job changes state. The states are a summary for people and tools; the truth
is in the run directories (a rerun resumes from their records, whatever study.json says, so a
study killed between two writes of this file loses nothing).

A rerun compares the file's identity (``Study.identity``) with the recorded one: additions
(models, benchmarks, judges, benchmarks added to a judge) are taken up; any other difference is
refused, listing every difference, before anything is written.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError, SpecError
from medlens.core.version import __version__
from medlens.models import model_identity
from medlens.runs.files import write_atomic
from medlens.runs.recorded import stored_spec
from medlens.study.plan import StudyPlan

STUDY_JSON = "study.json"
SCHEMA = 1
SECTIONS = ("models", "benchmarks", "judges")


class StudyChangedError(MedlensError):
    """The study file changed in a way that would mix results made under other settings."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_record(folder: Path) -> dict[str, Any] | None:
    path = folder / STUDY_JSON
    if not path.is_file():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(path, None, f"cannot read the study record ({exc})") from None
    if not isinstance(value, dict) or not isinstance(value.get("identity"), dict):
        raise InputError(path, None, "not a study record (no identity)")
    return value


def identity_changes(old: dict[str, Any], new: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(additions, refused changes) from the recorded identity `old` to the file's `new`."""
    added: list[str] = []
    refused: list[str] = []
    if old.get("seed") != new.get("seed"):
        refused.append(f"seed {old.get('seed')!r} → {new.get('seed')!r}")
    for section in SECTIONS:
        before, after = old.get(section, {}), new.get(section, {})
        what = section[:-1]
        for label, entry in before.items():
            if label not in after:
                refused.append(f"{what} {label} was removed (use --only to run a subset)")
                continue
            for key in sorted(set(entry) | set(after[label])):
                was, now_ = entry.get(key), after[label].get(key)
                if was == now_:
                    continue
                if section == "judges" and key == "benchmarks" and _grew(was, now_):
                    added.append(f"judge {label} on {', '.join(sorted(set(now_) - set(was)))}")
                else:
                    refused.append(f"{what} {label}: {key} {was!r} → {now_!r}")
        added += [f"{what} {label}" for label in after if label not in before]
    return added, refused


def _grew(was: Any, now_: Any) -> bool:
    return isinstance(was, list) and isinstance(now_, list) and set(was) < set(now_)


def comparable(identity: dict[str, Any]) -> dict[str, Any]:
    """A recorded identity with its model and judge specs as :func:`model_identity` writes them
    (a study recorded before base_url became transport, with the options in any order)."""
    result = dict(identity)
    for section in ("models", "judges"):
        entries = identity.get(section)
        if not isinstance(entries, dict):
            continue
        result[section] = {
            label: {**entry, "spec": _spec_identity(entry.get("spec"))}
            if isinstance(entry, dict) else entry
            for label, entry in entries.items()
        }  # fmt: skip
    return result


def _spec_identity(text: Any) -> Any:
    try:
        return model_identity(stored_spec(text)) if isinstance(text, str) else text
    except SpecError:
        return text


def check_identity(plan: StudyPlan, record: dict[str, Any] | None) -> list[str]:
    """The additions since `record`; StudyChangedError listing every refused difference."""
    if record is None:
        return []
    added, refused = identity_changes(comparable(record["identity"]), plan.study.identity())
    if refused:
        raise StudyChangedError(
            f"{plan.folder / STUDY_JSON}: {plan.study.path} changed since the study began "
            f"({'; '.join(refused)}); only added models, benchmarks and judges are taken up, so "
            "restore the file or give the study another name"
        )
    return added


class StudyRecord:
    """The content of study.json, updated in memory and saved atomically."""

    def __init__(self, plan: StudyPlan, previous: dict[str, Any] | None) -> None:
        self.plan = plan
        self.path = plan.folder / STUDY_JSON
        previous = previous or {}
        self.data: dict[str, Any] = {
            "schema": SCHEMA,
            "name": plan.study.name,
            "medlens_version": __version__,
            "created": previous.get("created") or now(),
            "updated": now(),
            "file": {"path": str(plan.study.path), "sha256": plan.study.sha256},
            "identity": plan.study.identity(),
            "plan": plan_json(plan),
            "runs": {key: _resumed(previous.get("runs", {}).get(key)) for key in plan.runs},
            "judges": {job.key: _resumed(previous.get("judges", {}).get(job.key))
                       for jobs in plan.judges.values() for job in jobs},
            "boards": previous.get("boards", {}),
            "stop": None,
            "cost": previous.get("cost", {}),
        }  # fmt: skip

    def update(self, section: str, key: str, **fields: Any) -> None:
        self.data[section].setdefault(key, {}).update(fields, updated=now())

    def save(self) -> None:
        self.data["updated"] = now()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.path, json.dumps(self.data, indent=2, ensure_ascii=False) + "\n")


def _resumed(state: dict[str, Any] | None) -> dict[str, Any]:
    """A job's recorded state as this invocation starts: `running` means its study was killed
    (this one holds the lock), so it reads `stopped` until it runs again."""
    if state is None:
        return {"state": "pending"}
    return {**state, "state": "stopped"} if state.get("state") == "running" else dict(state)


def plan_json(plan: StudyPlan) -> dict[str, Any]:
    study = plan.study
    runs = {}
    for key, job in plan.runs.items():
        runs[key] = {
            "model": job.model, "benchmark": job.benchmark, "model_spec": str(job.options.model),
            "benchmark_spec": str(job.options.bench), "lane": job.lane,
            "concurrency": job.options.concurrency, "limit": job.options.limit,
            "judges": [j.judge for j in plan.judges[key]],
        }  # fmt: skip
        if job.sample is not None:  # on the study's design subset (study.sampling)
            runs[key]["sample"] = job.sample
        if job.adaptive is not None:  # asks what its interval needs (study.adaptive_runs)
            runs[key]["adaptive"] = {"target_halfwidth": job.adaptive.target_halfwidth,
                                     "max_items": job.adaptive.max_items}  # fmt: skip
    return {
        "models": list(study.models),
        "benchmarks": list(study.benchmarks),
        "judges": list(study.judges),
        "runs": runs,
        "boards": [board.name for board in study.boards],
        "budget": plan.budget,
    }
