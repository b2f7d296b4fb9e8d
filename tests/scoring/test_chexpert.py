"""Rule-based CheXpert labels (an approximation of CheXbert) and the finding-label F1."""

from __future__ import annotations

import pytest

from medlens.scoring.chexpert import (
    FINDINGS,
    NEGATIVE,
    NO_FINDING,
    POSITIVE,
    UNCERTAIN,
    chexpert_labels,
    finding_counts,
    finding_f1,
)


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        ("No pneumothorax.", {"Pneumothorax": NEGATIVE, NO_FINDING: POSITIVE}),
        ("Mild cardiomegaly.", {"Cardiomegaly": POSITIVE}),
        ("Possible left lower lobe pneumonia.", {"Pneumonia": UNCERTAIN}),
        (
            "No pneumothorax, pleural effusion, or focal consolidation.",
            {
                "Pneumothorax": NEGATIVE,
                "Pleural Effusion": NEGATIVE,
                "Consolidation": NEGATIVE,
                NO_FINDING: POSITIVE,
            },
        ),
        (
            "Heart size is normal. Lungs are clear.",
            {"Cardiomegaly": NEGATIVE, "Lung Opacity": NEGATIVE, NO_FINDING: POSITIVE},
        ),
        (
            "Small left pleural effusion. Pneumothorax is not seen.",
            {"Pleural Effusion": POSITIVE, "Pneumothorax": NEGATIVE},
        ),
        ("Atelectasis versus pneumonia.", {"Atelectasis": UNCERTAIN, "Pneumonia": UNCERTAIN}),
        (
            "Left basilar opacity, which may represent atelectasis.",
            {"Lung Opacity": POSITIVE, "Atelectasis": UNCERTAIN},
        ),
        (
            "There is no pulmonary edema but there is a small right effusion.",
            {"Edema": NEGATIVE, "Pleural Effusion": POSITIVE},
        ),
        ("Pneumonia cannot be excluded.", {"Pneumonia": UNCERTAIN}),
        (
            "Endotracheal tube terminates 4 cm above the carina. No acute fracture.",
            {"Support Devices": POSITIVE, "Fracture": NEGATIVE, NO_FINDING: POSITIVE},
        ),
        ("Right upper lobe pulmonary nodule.", {"Lung Lesion": POSITIVE}),
        ("Widened mediastinum.", {"Enlarged Cardiomediastinum": POSITIVE}),
        ("Pleural thickening at the apex.", {"Pleural Other": POSITIVE}),
    ],
)
def test_labels_with_negation_and_uncertainty(report: str, expected: dict[str, int]) -> None:
    assert chexpert_labels(report) == expected


def test_there_are_fourteen_observations() -> None:
    assert len(FINDINGS) == 14 and FINDINGS[0] == NO_FINDING


def test_a_positive_mention_outranks_a_negated_one() -> None:
    report = "No effusion on the right. Small left pleural effusion."
    assert chexpert_labels(report)["Pleural Effusion"] == POSITIVE


def test_finding_f1_of_a_report_with_itself_is_one() -> None:
    reference = "Cardiomegaly with small bilateral effusions. No pneumothorax."
    assert finding_f1(reference, reference) == 1.0
    assert finding_f1("Lungs are clear.", "No acute cardiopulmonary process.") == 1.0


def test_finding_f1_counts_positive_findings_only() -> None:
    reference = "Cardiomegaly. Small left pleural effusion."
    prediction = "Cardiomegaly. No effusion. Possible pneumonia."
    assert finding_counts(prediction, reference) == (1, 0, 1)
    assert finding_f1(prediction, reference) == pytest.approx(2 / 3)
    # Under the U-ones policy the uncertain pneumonia becomes a false positive.
    assert finding_counts(prediction, reference, uncertain="positive") == (1, 1, 1)
    assert finding_f1("Mild cardiomegaly.", "Normal chest, lungs are clear.") == 0.0
