"""MIMIC-CXR's normal/abnormal classification view (``mimic-cxr:DIR?task=normal``): one
``classify`` item per study of the split over the labels *normal* / *abnormal*, its gold from
the release's own CheXpert label file ``mimic-cxr-2.0.0-chexpert.csv`` (MIMIC-CXR-JPG 2.0.0;
columns ``subject_id``, ``study_id`` and the 14 observations, 1.0 positive, 0.0 negative, -1.0
uncertain, empty not mentioned): *normal* when ``No Finding`` is 1.0, *abnormal* when any
pathology (every observation but No Finding and Support Devices) is 1.0. A study that is
neither (only uncertain or unmentioned findings) has no defensible gold and is left out; the
description counts how many.
"""

from __future__ import annotations

from pathlib import Path

from medlens.sources.release_csv import find_table, read_release_table

LABELS = ("normal", "abnormal")
QUESTION = "Is this chest X-ray study normal or abnormal? Answer with normal or abnormal."
CHEXPERT_TABLE = "mimic-cxr-2.0.0-chexpert.csv"
_NOT_PATHOLOGY = {"subject_id", "study_id", "No Finding", "Support Devices"}


def study_labels(root: Path) -> tuple[dict[str, str], int]:
    """study_id → normal/abnormal, and the number of studies left out (neither)."""
    table = find_table(root, (CHEXPERT_TABLE,))
    labels: dict[str, str] = {}
    left_out = 0
    for _, row in read_release_table(table, ("subject_id", "study_id", "No Finding")):
        positive = {name for name, value in row.items() if _is_positive(value)}
        if positive - _NOT_PATHOLOGY:
            labels[row["study_id"]] = "abnormal"
        elif "No Finding" in positive:
            labels[row["study_id"]] = "normal"
        else:
            left_out += 1
    return labels, left_out


def _is_positive(value: str) -> bool:
    try:
        return float(value) == 1.0
    except ValueError:
        return False
