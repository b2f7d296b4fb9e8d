"""CheXpert-label F1s of generated reports, both ways the Med-PaLM M paper family reports them.

Each report (generated and reference) is labelled over the 14 CheXpert observations by a
labeller: medlens's rule-based one (``scoring.chexpert``, an approximation of CheXbert, named
"rule-based" wherever a figure is shown) or a learned one the user has (``scoring.learned_labeler``).
A finding is *positive* on a side when its label is 1, and under the uncertain-label policy
(``negative``: U-zeros, the default; ``positive``: U-ones; ``ignore``: the pair is left out
of that finding's comparison when either side is uncertain). Then per finding: true positives,
false positives, false negatives.

- ``chexpert_macro_f1_14``: the mean per-finding F1 over the 14 observations;
- ``chexpert_micro_f1_5`` / ``chexpert_macro_f1_5``: micro- and macro-F1 over the 5 major
  findings (atelectasis, cardiomegaly, consolidation, edema, pleural effusion).

A finding that neither side names in any compared pair has no F1 and is left out of the macro
mean (scikit-learn's ``f1_score(..., average="macro", zero_division=np.nan)``); no value when
none is named. The statistics are per-item sums (items × 3F), so each metric is recomputed on
cluster-bootstrap resamples like every other corpus metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from medlens.scoring.chexpert import FINDINGS, POSITIVE, UNCERTAIN, UNCERTAIN_POLICIES
from medlens.scoring.kind_rows import Statistic

MAJOR_FINDINGS: tuple[str, ...] = (
    "Atelectasis",
    "Cardiomegaly",
    "Consolidation",
    "Edema",
    "Pleural Effusion",
)
"""The 5 major findings of CheXpert's competition tasks (Med-PaLM M's micro/macro-F1-5)."""

LABEL_F1_METRICS: dict[str, tuple[tuple[str, ...], str]] = {
    "chexpert_macro_f1_14": (FINDINGS, "macro"),
    "chexpert_micro_f1_5": (MAJOR_FINDINGS, "micro"),
    "chexpert_macro_f1_5": (MAJOR_FINDINGS, "macro"),
}
"""Metric name → (findings, average)."""

Labels = Mapping[str, int]


def check_policy(uncertain: str) -> str:
    """The policy itself, or ValueError naming the three known ones."""
    if uncertain not in UNCERTAIN_POLICIES:
        raise ValueError(
            f"--uncertain {uncertain!r}: expected one of {', '.join(UNCERTAIN_POLICIES)}"
        )
    return uncertain


def label_matrix(labels: Sequence[Labels], findings: Sequence[str], uncertain: str) -> np.ndarray:
    """(reports × findings): 1 positive under the policy, 0 not, -1 uncertain under ``ignore``."""
    check_policy(uncertain)
    out = np.zeros((len(labels), len(findings)), dtype=np.int8)
    for row, report in enumerate(labels):
        for column, finding in enumerate(findings):
            value = report.get(finding)
            if value == POSITIVE or (value == UNCERTAIN and uncertain == "positive"):
                out[row, column] = 1
            elif value == UNCERTAIN and uncertain == "ignore":
                out[row, column] = -1
    return out


def label_stats(
    predicted: Sequence[Labels],
    reference: Sequence[Labels],
    findings: Sequence[str],
    uncertain: str,
) -> np.ndarray:
    """(items × 3F): per finding, true positive, false positive, false negative (0/1 each)."""
    said = label_matrix(predicted, findings, uncertain)
    wanted = label_matrix(reference, findings, uncertain)
    compared = (said >= 0) & (wanted >= 0)
    p, g = (said == 1) & compared, (wanted == 1) & compared
    return np.hstack([p & g, p & ~g, g & ~p]).astype(float)


def macro_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """(resamples × 3F) sums → mean per-finding F1 over the findings either side names."""
    tp, fp, fn = np.split(sums, 3, axis=1)
    denominator = 2 * tp + fp + fn
    named = denominator > 0
    f1 = np.divide(2 * tp, denominator, out=np.zeros_like(tp), where=named)
    count = named.sum(axis=1)
    total = np.where(named, f1, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(count.shape, np.nan), where=count > 0)


def micro_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """(resamples × 3F) sums → F1 of the pooled counts; NaN when no finding is named."""
    tp, fp, fn = (part.sum(axis=1) for part in np.split(sums, 3, axis=1))
    denominator = 2 * tp + fp + fn
    return np.divide(2 * tp, denominator, out=np.full(tp.shape, np.nan), where=denominator > 0)


def statistic_of(average: str) -> Statistic:
    """The sums → metric function of an average (``micro`` or ``macro``)."""
    return micro_f1_from_sums if average == "micro" else macro_f1_from_sums


def label_f1_table(
    predicted: Sequence[Labels], reference: Sequence[Labels], uncertain: str
) -> dict[str, tuple[np.ndarray, str]]:
    """Metric name → (items × 3F statistics, average), for every metric of
    :data:`LABEL_F1_METRICS`."""
    return {
        name: (label_stats(predicted, reference, findings, uncertain), average)
        for name, (findings, average) in LABEL_F1_METRICS.items()
    }


__all__ = [
    "LABEL_F1_METRICS",
    "MAJOR_FINDINGS",
    "check_policy",
    "label_f1_table",
    "label_matrix",
    "label_stats",
    "macro_f1_from_sums",
    "micro_f1_from_sums",
    "statistic_of",
]
