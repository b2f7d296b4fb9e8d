"""`board --score judge:NAME --human FILE`: each run's judged score calibrated on human labels.

The same computation as ``medlens agreement RUN... --judge NAME --human FILE`` (prediction-
powered inference, cluster-aware over images: ``ratings.human.judge_human_agreement``), shown
beside each run's raw judged mean. The board only reads: agreement files are written by
``medlens agreement``, never here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlens.analysis.score_source import ScoreSource
from medlens.core.errors import SpecError


def board_calibration(
    runs: Sequence[Path], source: ScoreSource, human: Sequence[Path]
) -> dict[str, Any]:
    """``{"judge", "label", "label_reason", "runs": [{"run", "raw", "score", "ci", "n_human",
    "n_judged", "method"}]}``; a run the labels do not cover has ``score`` None."""
    from medlens.judges.calibration import agreement_label
    from medlens.ratings.human import judge_human_agreement

    if source.kind != "judge" or source.judge is None:
        raise SpecError(f"--human calibrates a judge's scores: give --score judge:NAME "
                        f"(not {source.label})")  # fmt: skip
    result = judge_human_agreement(list(runs), source.judge, list(human))
    label, why = agreement_label(result["dimensions"])
    rows = [
        _row(Path(found["run"]).name, found["calibrated"]) for found in result["calibrated_runs"]
    ]
    return {"judge": source.judge, "label": label, "label_reason": why, "runs": rows}


def _row(run: str, calibrated: dict[str, Any] | None) -> dict[str, Any]:
    keys = ("raw", "score", "ci", "n_human", "n_judged", "method")
    if calibrated is None:
        return {"run": run, **dict.fromkeys(keys), "method": "labels cover none of its items"}
    return {"run": run, **{key: calibrated.get(key) for key in keys}}
