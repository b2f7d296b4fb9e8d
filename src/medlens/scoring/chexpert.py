"""Rule-based CheXpert finding labels for report text, and the finding-label F1 built on them.

This is an *approximation* of CheXbert (and of the CheXpert labeler it was trained from): a
keyword mention finder over the 14 CheXpert observations with clause-scoped negation and
uncertainty cues. It is deterministic, needs no model weights, and agrees with CheXbert on
plain sentences ("No pneumothorax.", "Mild cardiomegaly.", "Possible left lower lobe
pneumonia."), but it will miss paraphrases and long-range negation that CheXbert handles.
Report it as "rule-based finding F1", never as CheXbert F1.

Labels follow CheXpert's convention: 1 positive, 0 negative, -1 uncertain; findings that are
not mentioned are absent from the result. "No Finding" is 1 when no other observation except
Support Devices is positive or uncertain.

Uncertain mentions follow one of three policies (:data:`UNCERTAIN_POLICIES`): ``negative`` (the
"U-zeros" of CheXpert's paper, the default), ``positive`` ("U-ones"), or ``ignore`` (a finding
either report calls uncertain is left out of that pair's comparison). The metric applies only to
chest-radiograph reports (:func:`is_chest_report`): on other report sets (MedicationQA answers)
neither text names a chest finding, both get "No Finding", and F1 would read 1.0 for nonsense.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from medlens.core.items import Item

POSITIVE, NEGATIVE, UNCERTAIN = 1, 0, -1
NO_FINDING = "No Finding"
UNCERTAIN_POLICIES = ("negative", "positive", "ignore")
CHEST_SOURCES = frozenset({"mimic-cxr", "iu-xray"})
_CHEST_MODALITY = re.compile(r"\bchest\b.*\b(?:x-?ray|radiograph\w*|film)|\bcxr\b", re.I)

_MENTIONS: dict[str, str] = {
    "Enlarged Cardiomediastinum": r"enlarged cardiomediastin\w*|(?:cardio)?mediastinal "
    r"(?:widening|enlargement)|widen(?:ed|ing) (?:of the )?(?:superior )?mediastinum|"
    r"(?:cardio)?mediastinal (?:silhouette|contours?) (?:is |are )?(?:enlarged|widened)",
    "Cardiomegaly": r"cardiomegaly|enlarged (?:heart|cardiac silhouette)|cardiac enlargement|"
    r"heart (?:size )?is enlarged|enlargement of the (?:heart|cardiac silhouette)",
    "Lung Lesion": r"(?:pulmonary |lung )?(?:mass(?:es)?|nodules?|nodular (?:opacit\w+|densit\w+)|"
    r"lesions?|neoplasms?|tumou?rs?|granulomas?)",
    "Lung Opacity": r"opacit(?:y|ies)|opacification|infiltrat\w*|air ?space (?:disease|opacit\w+)|"
    r"haziness|hazy",
    "Edema": r"o?edema(?:tous)?|vascular (?:congestion|engorgement)|pulmonary congestion|"
    r"(?:congestive )?heart failure|\bchf\b|fluid overload",
    "Consolidation": r"consolidat\w*",
    "Pneumonia": r"pneumoni\w*|infectious process|infection",
    "Atelectasis": r"atelecta\w*|collapse",
    "Pneumothorax": r"pneumothora\w*",
    "Pleural Effusion": r"(?:pleural )?effusions?|pleural fluid|hydrothorax",
    "Pleural Other": r"pleural (?:thickening|scarring|plaques?)|fibrothorax|pleural calcification",
    "Fracture": r"fractures?|\bfx\b",
    "Support Devices": r"(?:endotracheal|nasogastric|orogastric|feeding|chest|tracheostomy|ng|og|et) "
    r"tubes?|\bett\b|central (?:venous )?(?:line|catheter)|\bpicc\b|catheters?|pacemaker|"
    r"\bpacer\b|defibrillator|\bicd\b|sternotomy wires|stents?|prosthetic valve|"
    r"valve replacement|surgical clips|\bdrains?\b|swan-ganz|port-?a-?cath",
}
FINDINGS: tuple[str, ...] = (NO_FINDING, *_MENTIONS)
"""The 14 CheXpert observations."""

# Statements of normality that name no finding word but deny one.
_NORMAL: dict[str, str] = {
    "Cardiomegaly": r"heart (?:size )?(?:is |are )?(?:normal|within normal limits|top normal|"
    r"upper limits of normal)|normal (?:heart|cardiac) (?:size|silhouette)|heart is normal in size|"
    r"cardiac silhouette is (?:normal|within normal limits)",
    "Enlarged Cardiomediastinum": r"(?:cardio)?mediastinal (?:silhouette|contours?) (?:is |are )?"
    r"(?:normal|within normal limits|unremarkable)|normal (?:cardio)?mediastinal",
    "Lung Opacity": r"lungs? (?:is |are )?clear",
}

_NEGATION_BEFORE = re.compile(
    r"\b(?:no|not|without|negative for|free of|clear of|absence of|absent|resolved|"
    r"resolution of|removal of|neither|nor|rather than)\b"
)
_NEGATION_AFTER = re.compile(
    r"^\W*(?:\w+\W+){0,3}?(?:is|are|has|have)? ?(?:not (?:seen|present|identified|visualized|"
    r"appreciated|evident)|absent|resolved|(?:been )?removed)\b"
)
_UNCERTAIN_BEFORE = re.compile(
    r"\b(?:may|might|could|possible|possibly|probable|probably|likely|questionable|question of|"
    r"suspect\w*|suspicious for|concern\w* for|suggest\w*|versus|vs|differential|equivocal|"
    r"borderline|cannot (?:be )?exclude\w*|not (?:be )?excluded|difficult to exclude|"
    r"may represent|can ?not rule out|rule out|r/o)\b"
)
_UNCERTAIN_AFTER = re.compile(
    r"^\W*(?:versus|vs)\b|^\W*(?:\w+\W+){0,3}?(?:cannot be (?:excluded|ruled out)|(?:is|are) not excluded|"
    r"is (?:possible|suspected|questioned|likely)|not ruled out)\b"
)
_CLAUSE_BREAK = re.compile(r"[.;:!?\n]+|\b(?:but|however|although|though|whereas|except)\b")
_COMPILED = {name: re.compile(rf"\b(?:{pattern})") for name, pattern in _MENTIONS.items()}
_NORMAL_COMPILED = {name: re.compile(rf"\b(?:{pattern})") for name, pattern in _NORMAL.items()}


def chexpert_labels(text: str) -> dict[str, int]:
    """CheXpert-style labels (1 / 0 / -1) for the findings a report mentions; see module doc."""
    labels: dict[str, int] = {}
    for clause in _CLAUSE_BREAK.split(text.lower()):
        for name, pattern in _COMPILED.items():
            for match in pattern.finditer(clause):
                _merge(labels, name, _mention_label(clause, match.start(), match.end()))
        for name, pattern in _NORMAL_COMPILED.items():
            if pattern.search(clause):
                _merge(labels, name, NEGATIVE)
    pathologies = (v for k, v in labels.items() if k != "Support Devices")
    if not any(value in (POSITIVE, UNCERTAIN) for value in pathologies):
        labels[NO_FINDING] = POSITIVE
    return labels


def _mention_label(clause: str, start: int, end: int) -> int:
    before, after = clause[:start], clause[end:]
    if _UNCERTAIN_BEFORE.search(before) or _UNCERTAIN_AFTER.search(after):
        return UNCERTAIN
    if _NEGATION_BEFORE.search(before) or _NEGATION_AFTER.search(after):
        return NEGATIVE
    return POSITIVE


def _merge(labels: dict[str, int], name: str, value: int) -> None:
    """CheXpert's aggregation: any positive mention wins, then uncertain, then negative."""
    rank = {POSITIVE: 2, UNCERTAIN: 1, NEGATIVE: 0}
    if name not in labels or rank[value] > rank[labels[name]]:
        labels[name] = value


def is_chest_report(item: Item) -> bool:
    """A chest-radiograph report: MIMIC-CXR, IU-Xray, or an item whose modality says chest X-ray."""
    if item.kind != "report":
        return False
    if item.meta.get("source", "").lower() in CHEST_SOURCES:
        return True
    return _CHEST_MODALITY.search(item.meta.get("modality", "")) is not None


def names_a_finding(labels: Mapping[str, int]) -> bool:
    """True when a report mentions one of the 13 observations (not the implied No Finding)."""
    return any(name != NO_FINDING for name in labels)


def positive_findings(labels: Mapping[str, int], uncertain_as_positive: bool = False) -> set[str]:
    """The findings labelled positive (and uncertain ones too when asked: the U-ones policy)."""
    wanted = (POSITIVE, UNCERTAIN) if uncertain_as_positive else (POSITIVE,)
    return {name for name, value in labels.items() if value in wanted}


def compared_findings(
    predicted: Mapping[str, int], reference: Mapping[str, int], uncertain: str = "negative"
) -> tuple[set[str], set[str]]:
    """The positive findings of each side under the uncertain-label policy."""
    if uncertain not in UNCERTAIN_POLICIES:
        raise ValueError(f"uncertain={uncertain!r}: expected one of {UNCERTAIN_POLICIES}")
    as_positive = uncertain == "positive"
    left = positive_findings(predicted, as_positive)
    right = positive_findings(reference, as_positive)
    if uncertain == "ignore":
        doubtful = {n for side in (predicted, reference) for n, v in side.items() if v == UNCERTAIN}
        left, right = left - doubtful, right - doubtful
    return left, right


def finding_counts(
    prediction: str, reference: str, uncertain: str = "negative"
) -> tuple[int, int, int]:
    """True positives, false positives, false negatives of positive findings (for micro-F1)."""
    predicted, gold = compared_findings(
        chexpert_labels(prediction), chexpert_labels(reference), uncertain
    )
    return len(predicted & gold), len(predicted - gold), len(gold - predicted)


def finding_f1(prediction: str, reference: str, uncertain: str = "negative") -> float:
    """Rule-based finding-label F1 of one generated report against its reference (1.0 if equal)."""
    tp, fp, fn = finding_counts(prediction, reference, uncertain)
    if tp + fp + fn == 0:
        return 1.0
    return 2 * tp / (2 * tp + fp + fn)


__all__ = [
    "FINDINGS",
    "NEGATIVE",
    "NO_FINDING",
    "POSITIVE",
    "UNCERTAIN",
    "UNCERTAIN_POLICIES",
    "chexpert_labels",
    "compared_findings",
    "finding_counts",
    "finding_f1",
    "is_chest_report",
    "names_a_finding",
    "positive_findings",
]
