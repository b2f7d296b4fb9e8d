"""Report metrics a perfect answer maxes out (issue 23): the text as the model wrote it, gold
and prediction normalised alike, so `oracle` scores 1.0 on every report metric of MIMIC-CXR-
and IU-Xray-shaped releases; corpus BLEU-4 is sacrebleu's, ROUGE-L is rouge-score's; the
CheXpert finding F1 is computed for chest radiographs only, "–" when no reference names a
finding, under a selectable uncertain-label policy."""

from __future__ import annotations

import csv
import gzip
import json
from pathlib import Path

import numpy as np
import pytest

from cli_runs import named_run
from medlens.core.items import Item
from medlens.scoring import corpus_stats
from medlens.scoring.chexpert import finding_counts, is_chest_report
from medlens.scoring.report_text import report_text
from tiny_images import PNG

FINDINGS = [
    "The cardiomediastinal silhouette is within normal limits. The lungs are clear. "
    "No pleural effusion or pneumothorax.",
    "Mild cardiomegaly. Small left pleural effusion with adjacent atelectasis. ___ tube in place.",
    "Right lower lobe opacity, possible pneumonia. No pneumothorax.",
]
MODEL = [
    "The cardiomediastinal silhouette is normal. The lungs are clear. No effusion.",
    "Cardiomegaly. Small left pleural effusion.",
    "Right lower lobe pneumonia. No pneumothorax.",
]


def _csv(path: Path, header: list[str], rows: list[list[str]], gz: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", newline="") if gz else path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def mimic_release(root: Path) -> Path:
    """MIMIC-CXR-JPG's split file, the sectioned reports and one JPG path per study."""
    studies = [("5000000" + str(n), "1000003" + str(n)) for n in range(len(FINDINGS))]
    for n, (study, subject) in enumerate(studies):
        image = root / "files" / f"p{subject[:2]}" / f"p{subject}" / f"s{study}" / f"d{n}.jpg"
        image.parent.mkdir(parents=True, exist_ok=True)
        image.write_bytes(PNG)
    _csv(root / "mimic-cxr-2.0.0-split.csv", ["dicom_id", "study_id", "subject_id", "split"],
         [[f"d{n}", study, subject, "test"] for n, (study, subject) in enumerate(studies)])  # fmt: skip
    _csv(root / "mimic_cxr_sectioned.csv.gz", ["study", "impression", "findings"],
         [[f"s{study}", "No acute process.", text]
          for (study, _), text in zip(studies, FINDINGS, strict=True)], gz=True)  # fmt: skip
    return root


def iu_release(root: Path) -> Path:
    """The Kaggle Open-i release: reports, projections and the normalised PNGs."""
    names = [f"{n + 1}_IM-000{n}-1001.dcm.png" for n in range(len(FINDINGS))]
    for name in names:
        (root / "images" / "images_normalized").mkdir(parents=True, exist_ok=True)
        (root / "images" / "images_normalized" / name).write_bytes(PNG)
    _csv(root / "indiana_projections.csv", ["uid", "filename", "projection"],
         [[str(n + 1), name, "Frontal"] for n, name in enumerate(names)])  # fmt: skip
    _csv(root / "indiana_reports.csv", ["uid", "MeSH", "findings", "impression"],
         [[str(n + 1), "normal", text, "Normal chest."] for n, text in enumerate(FINDINGS)])  # fmt: skip
    return root


@pytest.mark.parametrize(
    ("name", "release"), [("mimic-cxr", mimic_release), ("iu-xray", iu_release)]
)
def test_oracle_scores_one_on_every_report_metric(
    name: str, release: object, tmp_path: Path
) -> None:
    root = release(tmp_path / name)  # type: ignore[operator]
    run = named_run(f"{name}:{root}", "oracle", tmp_path / "runs", name)
    results = json.loads((run / "results.json").read_text())
    metrics = results["metrics"]["report"]
    assert set(metrics) == {
        "rouge_l", "bleu4", "chexpert_f1", "chexpert_f1_uncertain_positive",
        "chexpert_f1_uncertain_ignore", "chexpert_macro_f1_14", "chexpert_micro_f1_5",
        "chexpert_macro_f1_5",
    }  # fmt: skip
    for metric, cell in metrics.items():
        assert cell["value"] == pytest.approx(1.0), metric
        assert cell["n"] == len(FINDINGS)
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    for record in records:
        assert record["scores"] == {"rouge_l": pytest.approx(1.0), "bleu4": pytest.approx(1.0)}
        assert record["score"] == pytest.approx(1.0)
        assert record["extraction"]["answer"].endswith(".")  # the full stop is kept


def test_corpus_bleu_and_rouge_equal_the_libraries_on_the_same_strings(tmp_path: Path) -> None:
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu import corpus_bleu

    root = mimic_release(tmp_path / "cxr")
    replay = tmp_path / "predictions.csv"
    _csv(replay, ["index", "prediction"],
         [[f"s5000000{n}", text] for n, text in enumerate(MODEL)])  # fmt: skip
    run = named_run(f"mimic-cxr:{root}", f"replay:{replay}", tmp_path / "runs", "model")
    metrics = json.loads((run / "results.json").read_text())["metrics"]["report"]
    expected = corpus_bleu(MODEL, [[" ".join(f.split()) for f in FINDINGS]]).score / 100
    assert metrics["bleu4"]["value"] == pytest.approx(expected)
    scorer = RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [scorer.score(g, p)["rougeL"].fmeasure for p, g in zip(MODEL, FINDINGS, strict=True)]
    assert metrics["rouge_l"]["value"] == pytest.approx(np.mean(rouge))


def test_prediction_and_reference_are_normalised_alike() -> None:
    assert (
        report_text("  **Findings:**  The lungs\nare clear.  ")
        == "**Findings:** The lungs are clear."
    )
    assert (
        report_text("<think>Let me see.</think> Patient ___ has a tube.")
        == "Patient ___ has a tube."
    )


def _item(modality: str, source: str = "") -> Item:
    meta = {"modality": modality, **({"source": source} if source else {})}
    return Item("r", "Write the report.", "report", answer="x", meta=meta)


def test_chexpert_f1_is_for_chest_radiograph_reports_only() -> None:
    assert is_chest_report(_item("chest X-ray"))
    assert is_chest_report(_item("Chest radiograph"))
    assert is_chest_report(_item("", source="iu-xray"))
    assert not is_chest_report(_item(""))  # MedicationQA, LiveQA: no modality
    assert not is_chest_report(_item("CT"))


def test_a_nonsense_model_on_a_non_chest_set_gets_no_chexpert_f1(tmp_path: Path) -> None:
    """MedicationQA-like answers name no chest finding: no figure rather than 1.000 [1, 1]."""
    items = [{"id": f"m{n}", "question": "What is metformin for?", "kind": "report",
              "answer": "It lowers blood sugar in type 2 diabetes."} for n in range(4)]  # fmt: skip
    bench = tmp_path / "medication.jsonl"
    bench.write_text("".join(json.dumps(item) + "\n" for item in items))
    replay = tmp_path / "nonsense.csv"
    _csv(replay, ["index", "prediction"], [[f"m{n}", "Bananas are yellow."] for n in range(4)])
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "nonsense")
    metrics = json.loads((run / "results.json").read_text())["metrics"]["report"]
    assert "chexpert_f1" not in metrics
    assert metrics["rouge_l"]["value"] < 0.2


def test_no_value_when_the_references_name_no_finding() -> None:
    predicted, gold = ["Cardiomegaly."], ["Stable appearance of the chest."]
    stats = corpus_stats.chexpert_stats(predicted, gold, np.array([True]))
    # cardiomegaly is a false positive, the reference's implied No Finding a false negative;
    # the reference names no finding, so there is no F1 to report
    assert stats[0].tolist() == [0.0, 1.0, 1.0, 0.0]
    assert np.isnan(corpus_stats.f1_from_counts(stats.sum(axis=0)[None, :])[0])


@pytest.mark.parametrize(
    ("policy", "counts"),
    [("negative", (1, 0, 0)), ("positive", (1, 1, 1)), ("ignore", (1, 0, 0))],
)
def test_uncertain_label_policies(policy: str, counts: tuple[int, int, int]) -> None:
    """Prediction: cardiomegaly, possible pneumonia; reference: cardiomegaly, possible edema.
    negative: uncertain = absent (tp 1); positive: pneumonia is a false positive and edema a
    false negative; ignore: both uncertain findings are left out of the comparison."""
    prediction = "Cardiomegaly. Possible pneumonia."
    reference = "Cardiomegaly. Possible edema."
    assert finding_counts(prediction, reference, policy) == counts


def test_ignore_drops_a_finding_either_side_doubts() -> None:
    # the reference is sure of the effusion, the model is not: ignored, not a miss
    assert finding_counts("Possible pleural effusion.", "Pleural effusion.", "ignore") == (0, 0, 0)
    assert finding_counts("Possible pleural effusion.", "Pleural effusion.", "negative") == (
        0,
        0,
        1,
    )
    with pytest.raises(ValueError, match="uncertain"):
        finding_counts("a", "b", "sometimes")
