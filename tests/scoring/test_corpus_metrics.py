"""Corpus metrics per kind (results["metrics"]): each equals its reference library on the same
inputs (scikit-learn, sacrebleu, rouge-score), its CI comes from resampling the corpus
statistic, and a run reports them overall and per slice."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app
from medlens.scoring import corpus_stats
from medlens.scoring.chexpert import FINDINGS, UNCERTAIN, chexpert_labels
from medlens.scoring.corpus_metrics import corpus_ci

LABELS = ["benign", "malignant", "normal"]
REPORTS = [
    ("No acute cardiopulmonary process.", "No acute cardiopulmonary process."),
    ("Mild cardiomegaly. No pleural effusion.", "Cardiomegaly with small left pleural effusion."),
    ("Right lower lobe pneumonia.", "Possible right lower lobe pneumonia."),
    ("Lungs are clear. Heart size is normal.", "Heart size normal. Lungs clear."),
    ("Small pneumothorax at the left apex.", "Left apical pneumothorax, small."),
    ("Endotracheal tube in place. Bibasilar atelectasis.", "ET tube tip 4 cm above carina."),
    ("Pulmonary edema and bilateral effusions.", "Moderate pulmonary edema."),
    ("", "Fracture of the right seventh rib."),
]


def _stats_value(stats: np.ndarray, statistic: Callable[[np.ndarray], np.ndarray]) -> float:
    return float(statistic(stats.sum(axis=0)[None, :])[0])


@pytest.mark.parametrize("trial", range(4))
def test_macro_and_micro_f1_equal_sklearn(trial: int) -> None:
    from sklearn.metrics import accuracy_score, f1_score

    rng = np.random.default_rng(trial)
    gold = [LABELS[i] for i in rng.integers(0, 2, 120)]  # "normal" never gold
    pred: list[str | None] = [LABELS[i] for i in rng.integers(0, 3, 120)]
    pred[::9] = [None] * len(pred[::9])
    filled = [p if p is not None else "unanswered" for p in pred]
    macro = _stats_value(
        corpus_stats.class_stats(gold, pred, LABELS), corpus_stats.macro_f1_from_sums
    )
    reference = f1_score(gold, filled, labels=LABELS, average="macro", zero_division=np.nan)
    assert macro == pytest.approx(reference)
    correct = np.array([[float(g == p), 1.0] for g, p in zip(gold, pred, strict=True)])
    assert _stats_value(correct, corpus_stats.ratio_from_sums) == pytest.approx(
        accuracy_score(gold, filled)
    )


def test_corpus_bleu_equals_sacrebleu_and_resamples_like_a_repeated_corpus() -> None:
    from sacrebleu.metrics import BLEU

    predicted, gold = [p for p, _ in REPORTS], [g for _, g in REPORTS]
    stats = corpus_stats.bleu_stats(predicted, gold)
    reference = BLEU().corpus_score(predicted, [gold]).score / 100
    assert _stats_value(stats, corpus_stats.bleu_from_sums) == pytest.approx(reference)
    counts = np.array([2, 0, 1, 3, 0, 1, 1, 0])  # one bootstrap resample
    repeated_p = [p for p, c in zip(predicted, counts, strict=True) for _ in range(c)]
    repeated_g = [g for g, c in zip(gold, counts, strict=True) for _ in range(c)]
    resampled = corpus_stats.bleu_from_sums((counts @ stats)[None, :])[0]
    assert resampled == pytest.approx(BLEU().corpus_score(repeated_p, [repeated_g]).score / 100)


def test_chexpert_f1_is_sklearn_micro_f1_over_the_findings_uncertain_negative() -> None:
    from sklearn.metrics import f1_score

    predicted, gold = [p for p, _ in REPORTS], [g for _, g in REPORTS]

    def vector(text: str) -> list[int]:
        labels = chexpert_labels(text)
        return [int(labels.get(name, 0) == 1) for name in FINDINGS]  # -1 (uncertain) → 0

    stats = corpus_stats.chexpert_stats(predicted, gold, np.ones(len(gold), dtype=bool))
    expected = f1_score(
        np.array([vector(g) for g in gold]), np.array([vector(p) for p in predicted]),
        average="micro",
    )  # fmt: skip
    assert _stats_value(stats, corpus_stats.f1_from_counts) == pytest.approx(expected)
    assert chexpert_labels("Possible right lower lobe pneumonia.")["Pneumonia"] == UNCERTAIN


BOX_CASES = [
    # predicted, gold, matched
    ([(0, 0, 10, 10)], [(0, 0, 10, 10)], 1),
    ([(0, 0, 10, 10), (0, 0, 10, 9)], [(0, 0, 10, 10)], 1),  # one gold box, matched once
    ([(0, 0, 10, 10), (20, 20, 30, 30)], [(20, 20, 30, 31), (0, 0, 10, 11)], 2),
    ([(0, 0, 10, 4)], [(0, 0, 10, 10)], 0),  # IoU 0.4
    ([], [(0, 0, 10, 10)], 0),
]


@pytest.mark.parametrize(("predicted", "gold", "matched"), BOX_CASES)
def test_boxes_are_matched_one_to_one_at_iou_half(
    predicted: list[tuple[float, ...]], gold: list[tuple[float, ...]], matched: int
) -> None:
    assert corpus_stats.matched_boxes(predicted, gold) == matched  # type: ignore[arg-type]


def test_box_f1_is_micro_over_boxes() -> None:
    sums = np.array([[3.0, 4.0, 5.0]])  # 3 matched of 4 predicted, 5 gold
    precision, recall = 3 / 4, 3 / 5
    expected = 2 * precision * recall / (precision + recall)
    assert corpus_stats.box_f1_from_sums(sums)[0] == pytest.approx(expected)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_weighted_auroc_equals_sklearn_with_sample_weights(n_classes: int) -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(n_classes)
    truth = rng.integers(0, n_classes, 90)
    raw = rng.random((90, n_classes)) + np.eye(n_classes)[truth] * 0.4
    raw[::7] = raw[::7].round(1)  # ties
    matrix = raw / raw.sum(axis=1, keepdims=True)
    weights = rng.integers(0, 3, (1, 90)).astype(float)
    found = corpus_stats.weighted_auroc(matrix, truth, weights, np.arange(90))[0]
    if n_classes == 2:
        expected = roc_auc_score(truth == 1, matrix[:, 1], sample_weight=weights[0])
    else:
        expected = np.mean(
            [roc_auc_score(truth == c, matrix[:, c], sample_weight=weights[0]) for c in range(3)]
        )
    assert found == pytest.approx(expected)
    labels = [str(c) for c in range(n_classes)]
    rows = [dict(zip(labels, map(float, row), strict=True)) for row in matrix]
    from medlens.scoring import metrics

    unweighted = corpus_stats.weighted_auroc(matrix, truth, np.ones((1, 90)), np.arange(90))[0]
    assert unweighted == pytest.approx(metrics.auroc([str(t) for t in truth], rows, labels))


def test_corpus_ci_brackets_the_value_and_narrows_with_n() -> None:
    rng = np.random.default_rng(5)
    widths = []
    for n in (50, 2000):
        tp = rng.random(n) < 0.7
        stats = np.column_stack([tp, ~tp, ~tp]).astype(float)  # F1 = accuracy
        lo, hi = corpus_ci(stats, np.arange(n), corpus_stats.f1_from_counts)
        assert lo <= tp.mean() <= hi
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 3
    assert np.isnan(corpus_ci(np.zeros((0, 3)), np.array([]), corpus_stats.f1_from_counts)[0])


def test_clusters_are_left_out_whole() -> None:
    """20 images × 10 identical answers each: the interval is an image-level one, wide."""
    per_image = np.repeat(np.arange(20) % 2, 10).astype(float)
    stats = np.column_stack([per_image, np.ones(200)])
    clustered = corpus_ci(stats, np.repeat(np.arange(20), 10), corpus_stats.ratio_from_sums)
    independent = corpus_ci(stats, np.arange(200), corpus_stats.ratio_from_sums)
    assert clustered[1] - clustered[0] > 2 * (independent[1] - independent[0])


# ------------------------------------------------------------------ end to end, from the CLI


def _write_run_inputs(tmp_path: Path) -> tuple[Path, Path, list[dict[str, object]]]:
    items: list[dict[str, object]] = []
    outputs: list[str] = []
    rng = np.random.default_rng(11)
    for i in range(40):
        gold = LABELS[i % 3]
        items.append({
            "id": f"c{i}", "question": "Which class?", "kind": "classify", "answer": gold,
            "meta": {"labels": "|".join(LABELS), "image_id": f"img{i // 2}",
                     "modality": "CT" if i % 4 else "MRI"},
        })  # fmt: skip
        outputs.append(gold if rng.random() < 0.6 else LABELS[int(rng.integers(0, 3))])
    for i, (predicted, gold) in enumerate(REPORTS):
        items.append({"id": f"r{i}", "question": "Write the findings.", "kind": "report",
                      "answer": gold, "meta": {"modality": "chest X-ray"}})  # fmt: skip
        outputs.append(predicted or "I cannot tell.")
    for i, (predicted, gold) in enumerate(
        [("The image shows free air.", "free air"), ("free air or fluid", "free air"),
         ("Left kidney", "left kidney"), ("liver", "spleen")]
    ):  # fmt: skip
        items.append({"id": f"o{i}", "question": "What is seen?", "kind": "open",
                      "answer": gold, "meta": {"modality": "CT"}})  # fmt: skip
        outputs.append(predicted)
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps(item) + "\n" for item in items))
    replay = tmp_path / "predictions.csv"
    with replay.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        writer.writerows(zip([item["id"] for item in items], outputs, strict=True))
    return bench, replay, items


def test_a_run_reports_corpus_metrics_overall_and_per_slice(tmp_path: Path) -> None:
    from sacrebleu.metrics import BLEU
    from sklearn.metrics import f1_score

    bench, replay, items = _write_run_inputs(tmp_path)
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "corpus")
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    records = {
        r["id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())
    }
    classify = [i for i in items if i["kind"] == "classify"]
    gold = [str(i["answer"]) for i in classify]
    pred = [records[str(i["id"])]["extraction"]["answer"] or "none" for i in classify]
    macro = report["metrics"]["classify"]["macro_f1"]
    assert macro["n"] == 40 and macro["images"] == 20
    assert macro["value"] == pytest.approx(
        f1_score(gold, pred, labels=LABELS, average="macro", zero_division=np.nan)
    )
    assert macro["ci"][0] <= macro["value"] <= macro["ci"][1]
    micro = report["metrics"]["classify"]["micro_f1"]["value"]
    assert micro == pytest.approx(np.mean([g == p for g, p in zip(gold, pred, strict=True)]))
    assert "auroc" not in report["metrics"]["classify"]  # no probabilities in the records
    bleu = report["metrics"]["report"]["bleu4"]["value"]
    hyps = [records[f"r{i}"]["extraction"]["answer"] or "" for i in range(len(REPORTS))]
    assert bleu == pytest.approx(BLEU().corpus_score(hyps, [[g for _, g in REPORTS]]).score / 100)
    assert report["metrics"]["report"]["chexpert_f1"]["uncertain"] == "negative"
    from rouge_score.rouge_scorer import RougeScorer

    scorer = RougeScorer(["rougeL"], use_stemmer=True)
    rouge = [scorer.score(g, h)["rougeL"].fmeasure for h, (_, g) in zip(hyps, REPORTS, strict=True)]
    assert report["metrics"]["report"]["rouge_l"]["value"] == pytest.approx(np.mean(rouge))
    opened = report["metrics"]["open"]
    assert opened["contains"]["value"] == pytest.approx(0.75)  # substring: framed and hedge yes
    assert opened["exact"]["value"] == pytest.approx(0.25)
    assert opened["token_recall"]["value"] == pytest.approx(0.75)
    mri = report["by"]["modality"]["MRI"]["metrics"]["classify"]["macro_f1"]
    mri_items = [i for i in classify if i["meta"]["modality"] == "MRI"]  # type: ignore[index]
    mri_gold = [str(i["answer"]) for i in mri_items]
    mri_pred = [records[str(i["id"])]["extraction"]["answer"] or "none" for i in mri_items]
    assert mri["n"] == 10
    assert mri["value"] == pytest.approx(
        f1_score(mri_gold, mri_pred, labels=LABELS, average="macro", zero_division=np.nan)
    )


def test_reports_show_the_corpus_metrics(tmp_path: Path) -> None:
    bench, replay, _ = _write_run_inputs(tmp_path)
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "shown")
    for fmt in ("text", "md", "html"):
        result = CliRunner().invoke(app, ["report", str(run), "--format", fmt])
        assert result.exit_code == 0, result.output
        shown = result.output.replace("\\", "")  # markdown escapes the underscores
        assert "classify corpus metrics: macro_f1" in shown
        assert "chexpert_f1" in shown and "uncertain = negative" in shown


def test_the_reported_auroc_interval_keeps_a_width_when_the_sample_separates_perfectly() -> None:
    """The report's AUROC takes the interval of ``medlens subgroups`` (Newcombe's score interval,
    ``stats.auroc``); the percentile bootstrap of the first version is [1, 1] here."""
    from medlens.core.items import Item
    from medlens.scoring.corpus_metrics import corpus_cells
    from medlens.scoring.corpus_stats import build_kind_rows
    from medlens.scoring.kind_rows import KindRows
    from medlens.stats.auroc import newcombe_interval

    gold = ["malignant" if i % 3 == 0 else "benign" for i in range(60)]
    items = [
        Item(f"m{i}", "Benign or malignant?", "classify", answer=g,
             meta={"labels": "benign|malignant", "image_id": f"img{i}"})
        for i, g in enumerate(gold)
    ]  # fmt: skip
    records = [
        {"option_probs": {"malignant": 0.6 + i / 200, "benign": 0.4 - i / 200}}
        if g == "malignant"
        else {"option_probs": {"malignant": 0.4 - i / 200, "benign": 0.6 + i / 200}}
        for i, g in enumerate(gold)
    ]
    rows = KindRows(items=items, records=records)  # type: ignore[arg-type]
    build_kind_rows("classify", rows)
    cell = corpus_cells(rows)["auroc"]
    assert cell["value"] == pytest.approx(1.0) and cell["n"] == 60
    low, high = cell["ci"]
    assert low < 0.97 and high <= 1.0
    expected = newcombe_interval(1.0, 20, 40, 1.959963984540054)  # one item per image
    assert low == pytest.approx(expected[0], abs=1e-3)


def test_continuous_open_metrics_all_one_take_no_wilson_interval(tmp_path: Path) -> None:
    """Real VQA-RAD, the oracle: every open answer scores 1 on token F1 and BLEU-1. Those are
    continuous metrics, so their interval is the continuous one (as `slice` gives them), not
    Wilson's for a proportion (issue 36: "BLEU 1.000 [0.463, 1.000]"); exact stays 0/1."""
    from data_paths import realdata_dir
    from medlens.stats.bootstrap import group_spread

    run = named_run(f"vqa-rad:{realdata_dir('vqa_rad')}", "oracle", tmp_path, "o", "--limit", "40")
    metrics = json.loads((run / "results.json").read_text())["metrics"]["open"]
    n = metrics["exact"]["n"]
    ones, one_group = np.ones(n), np.zeros(n, dtype=int)
    clusters = np.arange(n)  # the open items of the first 40 are on distinct images
    assert metrics["exact"]["images"] == n
    wilson = group_spread(ones, one_group, clusters).bounds()
    continuous = group_spread(ones, one_group, clusters, continuous=True).bounds()
    assert metrics["exact"]["ci"] == pytest.approx([wilson[0][0], wilson[1][0]])
    for name in ("token_f1", "token_recall", "bleu1"):
        assert metrics[name]["value"] == 1.0
        assert metrics[name]["ci"] == pytest.approx([continuous[0][0], continuous[1][0]]), name
