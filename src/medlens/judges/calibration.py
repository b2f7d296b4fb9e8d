"""Judged scores anchored to human labels: the judged mean corrected by prediction-powered
inference (``stats/ppi.py``) on the items people labelled, the agreement file that keeps the
result beside the judge, and the label every judged table carries.

``judges/<name>/agreement.json`` is written by ``medlens agreement RUN --judge NAME --human FILE``;
it records a digest of the judged scores it saw, so a judge stage resumed or re-judged later
reads as uncalibrated again instead of borrowing an old calibration. Labels:

- ``uncalibrated``: no agreement file (or one made for other verdicts);
- ``weak agreement``: Cohen's κ (equivalence, mmbu) or a rubric dimension's Spearman ρ is
  below 0.6 (or could not be computed);
- ``calibrated``: otherwise.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.judges.verdicts import judged_item_scores
from medlens.runs.judgements import judge_dir, read_agreement, write_agreement
from medlens.runs.layout import agreement_file
from medlens.stats.ppi import ppi_mean, with_wilson_envelope

WEAK_BELOW = 0.6
"""κ or Spearman ρ below this marks a judge "weak agreement"."""


def scores_digest(scores: Mapping[str, float]) -> str:
    """sha256 over the judged (item, score) pairs, in item order."""
    text = "\n".join(f"{item}\t{scores[item]!r}" for item in sorted(scores))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _clustered(ids: list[str], clusters: Mapping[str, str]) -> bool:
    images = [clusters.get(i, i) for i in ids]
    return len(set(images)) < len(images)


def calibrated_score(
    judged: Mapping[str, float],
    judged_ids: list[str],
    human: Mapping[str, float],
    clusters: Mapping[str, str],
) -> dict[str, Any]:
    """``{"score", "ci", "n_human", "n_judged", "method", …}``: PPI++ over the judge's items.

    `judged_ids` are every item the judge was given (with or without a verdict); `judged` the
    scores of those with one (in [0, 1]); `human` each labelled item's mean human label in [0, 1].
    An item without a verdict keeps the mean verdict as a stand-in judge score (chosen without
    looking at any label, so the estimate stays unbiased) and is counted.
    """
    labelled = [i for i in judged_ids if i in human]
    if not labelled:
        raise MedlensError("the human labels cover none of the items this judge scored")
    rest = [i for i in judged_ids if i not in human]
    stand_in = float(sum(judged.values()) / len(judged)) if judged else 0.5
    f = {i: judged.get(i, stand_in) for i in judged_ids}
    out: dict[str, Any] = {
        "n_human": len(labelled), "n_judged": len(judged_ids),
        "stand_ins": sum(1 for i in judged_ids if i not in judged),
        "raw": float(sum(judged.values()) / len(judged)) if judged else None,
    }  # fmt: skip
    clustered = _clustered(judged_ids, clusters)
    if len(labelled) < 2:
        return {**out, "score": None, "ci": None, "method": "none (fewer than two labelled items)"}
    if not rest:  # people labelled everything: their mean is the answer
        mean, ci = human_mean([human[i] for i in labelled], [clusters.get(i, i) for i in labelled])
        return {**out, "score": mean, "ci": ci, "method": "human labels on every item"}
    by_image: dict[str, list[str] | None] = {"clusters_labelled": None, "clusters_unlabelled": None}
    if clustered:
        by_image = {"clusters_labelled": [clusters.get(i, i) for i in labelled],
                    "clusters_unlabelled": [clusters.get(i, i) for i in rest]}  # fmt: skip
    y = [human[i] for i in labelled]
    fit = ppi_mean(y, [f[i] for i in labelled], [f[i] for i in rest], **by_image)  # type: ignore[arg-type]
    binary = all(v in (0.0, 1.0) for v in [*y, *f.values()])
    if binary:
        fit = with_wilson_envelope(fit)
    human_only = human_mean(y, [clusters.get(i, i) for i in labelled])
    return {
        **out,
        "score": fit.estimate,
        "ci": [fit.ci[0], fit.ci[1]],
        "se": fit.se,
        "lambda": fit.lam,
        "images": fit.clusters if clustered else None,
        "images_labelled": fit.clusters_labelled if clustered else None,
        "method": _method(fit.lam, clustered, binary),
        "ci_ppi": list(fit.ci_ppi) if fit.ci_ppi else [fit.ci[0], fit.ci[1]],
        "human_only": {"score": human_only[0], "ci": human_only[1]},
        "notes": list(fit.notes),
    }


def human_mean(y: list[float], images: list[str]) -> tuple[float, list[float]]:
    """The labels' own mean and the interval every medlens table gives such a cell
    (``bootstrap.group_cis``: Wilson-cc, or cluster-robust when images repeat)."""
    import numpy as np

    from medlens.stats.bootstrap import group_cis

    values = np.asarray(y, dtype=float)
    lo, hi = group_cis(values, np.zeros(values.size, dtype=np.intp), np.asarray(images, object))
    return float(values.mean()), [float(lo[0]), float(hi[0])]


def _method(lam: float, clustered: bool, binary: bool) -> str:
    variance = (
        "cluster-robust (CR1) over images, t(G_L − 1)" if clustered else "iid, normal quantile"
    )
    envelope = ", enveloped with Wilson-cc at the effective sample size" if binary else ""
    return (
        f"PPI++ (prediction-powered inference, Angelopoulos et al. 2023; power-tuned "
        f"λ = {lam:.3f}), {variance}{envelope}"
    )


def agreement_label(dimensions: Mapping[str, Mapping[str, Any]]) -> tuple[str, str]:
    """(label, why) from ``judge_human_agreement``'s per-dimension statistics."""
    weak = []
    for name, stats in dimensions.items():
        key = "kappa" if name == "equivalent" else "spearman"
        value = stats.get(key)
        if value is None or (isinstance(value, float) and math.isnan(value)) or value < WEAK_BELOW:
            shown = "n/a" if value is None else f"{value:.2f}"
            weak.append(f"{'κ' if key == 'kappa' else 'Spearman ρ'} {shown} on {name}")
    if weak:
        return "weak agreement", "; ".join(weak) + f" (below {WEAK_BELOW})"
    return "calibrated", "agreement with people at or above 0.6 on every dimension"


def save_agreement(folder: Path, result: Mapping[str, Any], digest: str, files: list[Path]) -> Path:
    """Write ``agreement.json`` beside the judge (atomically)."""
    label, why = agreement_label(result["dimensions"])
    value = {
        "schema": 1,
        "judge": result["judge"],
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "human_files": [{"path": str(f), "sha256": _file_sha256(f)} for f in files],
        "judged_scores_sha256": digest,
        "label": label,
        "label_reason": why,
        "dimensions": {
            name: {k: stats.get(k) for k in ("n", "items", "kappa", "spearman", "mad")}
            for name, stats in result["dimensions"].items()
        },
        "calibrated": result.get("calibrated"),
    }
    return write_agreement(folder, value)


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def calibration_entry(folder: Path, digest: str) -> dict[str, Any]:
    """The ``calibration`` of a judge's results entry: its label, why, and the calibrated score
    when an up-to-date agreement file holds one."""
    try:
        value = read_agreement(folder)
    except (OSError, ValueError):
        unreadable = f"{agreement_file(folder)} is unreadable"
        return {"label": "uncalibrated", "reason": unreadable, "calibrated": None}
    if value is None:
        return {"label": "uncalibrated", "reason": "no agreement with human labels on file "
                "(medlens agreement RUN --judge NAME --human FILE)", "calibrated": None}  # fmt: skip
    if value.get("judged_scores_sha256") != digest:
        return {"label": "uncalibrated", "reason": "the agreement file was made for other "
                "verdicts (the judge ran again since); run medlens agreement again",
                "calibrated": None}  # fmt: skip
    return {
        "label": value.get("label", "uncalibrated"),
        "reason": value.get("label_reason", ""),
        "calibrated": value.get("calibrated"),
    }


def judge_calibration(run_dir: Path | str, name: str) -> dict[str, Any]:
    """A judge's (or panel's) ``{"label", "reason", "calibrated"}`` as every judged table shows
    it, read from its agreement file against its current judged scores (for callers that
    tabulate ``judged_item_scores`` themselves, e.g. ``--score judge:NAME``)."""
    digest = scores_digest(judged_item_scores(run_dir, name))
    return calibration_entry(judge_dir(run_dir, name), digest)
