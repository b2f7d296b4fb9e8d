"""A baseline run (``--baseline RUN``): a previous full run of a related model (the last
checkpoint) on the same benchmark, read and checked once for ``run --adaptive``, ``estimate``
and ``gate``.

A baseline must be a run on every item of the same benchmark content, each with a score, made
by the model itself (no probe), and not itself an estimate (a run on a designed subset or an
adaptive run): its full-benchmark score is then known exactly, so ``delta`` = estimate − that
score has the estimate's interval shifted by it. Its fingerprint (``scores_sha256``: the sha256
of its item ids and scores) is recorded by an adaptive run that used it as a predictor, so a
changed baseline is noticed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.items.responses import run_spec
from medlens.runs.layout import RUN_FILE, is_run
from medlens.runs.view import RunView


@dataclass(frozen=True)
class Baseline:
    """A read baseline run."""

    path: Path
    spec: dict[str, Any]
    scores: dict[str, float]
    """Item id → score, for every item of the run."""

    @property
    def score(self) -> float:
        return sum(self.scores.values()) / len(self.scores)

    @property
    def content_hash(self) -> str:
        return str((self.spec.get("benchmark") or {}).get("content_hash") or "")

    @property
    def fingerprint(self) -> str:
        pairs = sorted(self.scores.items())
        text = json.dumps(pairs, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def to_spec(self) -> dict[str, Any]:
        """What a run or an estimate records of it."""
        return {
            "path": str(self.path.resolve()),
            "scores_sha256": self.fingerprint,
            "score": round(self.score, 6),
            "n": len(self.scores),
        }


def estimated_kind(spec: Mapping[str, Any]) -> str | None:
    """What kind of estimated run a spec describes (None: a run on its items)."""
    if spec.get("adaptive"):
        return "an adaptive run (`run --adaptive`)"
    if isinstance((spec.get("subset") or {}).get("design"), dict):
        return "a run on a designed subset (`items sample`)"
    return None


def read_baseline(path: Path, flag: str = "--baseline") -> Baseline:
    """Read and check a baseline run (one line naming it and the problem when it is not one)."""
    if not is_run(path):
        raise MedlensError(f"{flag} {path}: not a run directory (no {RUN_FILE})")
    spec = run_spec(path)
    kind = estimated_kind(spec)
    if kind is not None:
        raise MedlensError(
            f"{flag} {path}: is {kind}, itself an estimate; a baseline must be a full run"
        )
    if spec.get("probe"):
        raise MedlensError(
            f"{flag} {path}: made with --probe {spec['probe']}, not the model's own answers"
        )
    view = RunView(path)
    ids = [item.id for item in view.items()]
    records = view.records()
    scores = {
        i: float(r["score"])
        for i, r in records.items()
        if r.get("error") is None and r.get("score") is not None
    }
    missing = [i for i in ids if i not in scores]
    if missing:
        raise MedlensError(
            f"{flag} {path}: {len(missing)} of {len(ids)} items have no score (first: "
            f"{missing[0]!r}); a baseline must be a finished full run"
        )
    return Baseline(path, spec, {i: scores[i] for i in ids})


def check_same_items(
    baseline: Baseline, content_hash: str, ids: Sequence[str], what: str, flag: str = "--baseline"
) -> None:
    """The baseline ran on the same benchmark content and items as `what`."""
    benchmark = baseline.spec.get("benchmark") or {}
    if baseline.content_hash != content_hash:
        raise MedlensError(
            f"{flag} {baseline.path}: ran on {benchmark.get('spec')} (content "
            f"{baseline.content_hash[:12]}), not on the benchmark of {what} (content "
            f"{content_hash[:12]})"
        )
    if set(baseline.scores) != set(ids):
        raise MedlensError(
            f"{flag} {baseline.path}: its {len(baseline.scores)} items are not the "
            f"{len(ids)} items of {what}"
        )


def delta_json(estimate: float, ci: tuple[float, float], baseline: Baseline) -> dict[str, Any]:
    """``baseline_score``, ``delta`` (this − baseline) and ``delta_ci``: the estimate's interval
    shifted by the baseline's exactly known full-benchmark score."""
    base = baseline.score
    return {
        "baseline": str(baseline.path),
        "baseline_score": round(base, 6),
        "delta": round(estimate - base, 6),
        "delta_ci": [round(ci[0] - base, 6), round(ci[1] - base, 6)],
    }
