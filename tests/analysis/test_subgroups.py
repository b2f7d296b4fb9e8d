"""`medlens subgroups`: per-group accuracy and AUROC, the largest gap with its interval, and
sensitivity at a fixed specificity (and the reverse), against scikit-learn, on a binary
screening run with per-label probabilities from a real loopback server, and on real VQA-RAD."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score, roc_curve
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from loopback_server import ServerConfig, serve, unit_hash
from medlens.cli import app
from medlens.scoring.screening import sensitivity_at_specificity, specificity_at_sensitivity

LABELS = ("normal", "abnormal")


def _bench(tmp_path: Path) -> tuple[str, dict[str, str]]:
    golds, rows = {}, []
    for n in range(150):
        key = f"c{n}"
        golds[key] = LABELS[int(unit_hash("gold", n) < 0.4)]
        sex = "F" if n % 2 else "M"
        site = "rare" if n % 15 == 0 else "common"
        ward = "screened" if golds[key] == "normal" and n % 3 == 0 else "open"  # no abnormal
        rows.append({"id": key, "question": f"[[{key}]] Normal or abnormal?", "kind": "classify",
                     "answer": golds[key],
                     "meta": {"labels": "|".join(LABELS), "sex": sex, "site": site, "ward": ward,
                              "image_id": f"img{n // 2}"}})  # fmt: skip
    path = tmp_path / "screen.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"jsonl:{path}", golds


@pytest.fixture
def screening_run(tmp_path: Path) -> Path:
    bench, golds = _bench(tmp_path)

    def gold(request):  # type: ignore[no-untyped-def]
        key = request.text.split("[[")[1].split("]]")[0]
        return golds[key]

    def probability(request):  # type: ignore[no-untyped-def]
        return 0.5 + 0.49 * unit_hash("p", request.text)

    config = ServerConfig(gold=gold, accuracy=0.7, logprob_tokens=("normal", "abnormal"),
                          probability=probability)  # fmt: skip
    with serve(config) as server:
        model = f"openai:m?base_url={server.base_url}&logprobs=true&top_logprobs=2"
        return named_run(bench, model, tmp_path / "runs", "screen")


def _scored(run: Path) -> dict[str, tuple[float, float]]:
    """Item id → (P(abnormal) renormalised, rule score), from the run's records."""
    out = {}
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    for record in records:
        probs = record["option_probs"]
        p = probs.get("abnormal", 0.0) / sum(probs.values())
        out[record["id"]] = (p, record["score"])
    return out


def test_groups_gaps_and_screening_points_equal_scikit_learn(screening_run: Path) -> None:
    golds = {f"c{n}": LABELS[int(unit_hash("gold", n) < 0.4)] for n in range(150)}
    scored = _scored(screening_run)
    ids = sorted(scored)
    sex = {f"c{n}": ("F" if n % 2 else "M") for n in range(150)}
    result = CliRunner().invoke(app, ["subgroups", str(screening_run), "--by", "sex",
                                      "--positive", "abnormal", "--min-n", "20",
                                      "--at-specificity", "0.8", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["auroc_scores"] == "per-label probabilities" and found["positive"] == "abnormal"
    expected_acc, expected_auc = {}, {}
    for group in ("F", "M"):
        members = [i for i in ids if sex[i] == group]
        y = [golds[i] == "abnormal" for i in members]
        p = [scored[i][0] for i in members]
        expected_acc[group] = float(np.mean([scored[i][1] for i in members]))
        expected_auc[group] = roc_auc_score(y, p)
        cell = found["groups"][group]
        assert cell["n"] == len(members)
        assert cell["accuracy"] == pytest.approx(expected_acc[group])
        assert cell["auroc"] == pytest.approx(expected_auc[group])
        assert cell["auroc_ci"][0] <= cell["auroc"] <= cell["auroc_ci"][1]
        assert cell["accuracy_ci"][0] <= cell["accuracy"] <= cell["accuracy_ci"][1]
    gap = found["gaps"]["auroc"]
    assert gap["value"] == pytest.approx(abs(expected_auc["F"] - expected_auc["M"]))
    assert gap["ci"][0] <= gap["value"] <= gap["ci"][1] and gap["groups"] == 2
    assert found["gaps"]["accuracy"]["value"] == pytest.approx(
        abs(expected_acc["F"] - expected_acc["M"])
    )
    # sensitivity at specificity ≥ 0.8 and specificity at sensitivity ≥ 0.9 from roc_curve
    y = np.array([golds[i] == "abnormal" for i in ids])
    p = np.array([scored[i][0] for i in ids])
    fpr, tpr, _ = roc_curve(y, p, drop_intermediate=False)
    overall = found["screening"]["overall"]
    assert overall["sensitivity_at_specificity"]["value"] == pytest.approx(
        tpr[1 - fpr >= 0.8].max()
    )
    assert overall["specificity_at_sensitivity"]["value"] == pytest.approx(
        (1 - fpr[tpr >= 0.9]).max()
    )
    low, high = overall["sensitivity_at_specificity"]["ci"]
    assert low <= overall["sensitivity_at_specificity"]["value"] <= high and high > low
    text = CliRunner().invoke(
        app, ["subgroups", str(screening_run), "--by", "site", "--min-n", "20"]
    )
    assert "rare: n=10" in text.output and "not in the gap" in text.output
    assert "give --positive (abnormal or normal) for screening points" in text.output


def test_screening_points_equal_roc_curve_on_random_scores() -> None:
    rng = np.random.default_rng(3)
    for _ in range(20):
        y = rng.random(60) < 0.3
        p = np.round(rng.random(60), 1)  # ties
        fpr, tpr, _ = roc_curve(y, p, drop_intermediate=False)
        for target in (0.5, 0.8, 0.95):
            ones = np.ones((1, 60))
            assert sensitivity_at_specificity(p, y, ones, target)[0] == pytest.approx(
                tpr[1 - fpr >= target - 1e-12].max()
            )
            assert specificity_at_sensitivity(p, y, ones, target)[0] == pytest.approx(
                (1 - fpr[tpr >= target - 1e-12]).max()
            )


def test_without_probabilities_accuracy_only_on_real_vqa_rad(tmp_path: Path) -> None:
    bench = f"vqa-rad:{realdata_dir('vqa_rad')}"
    run = named_run(bench, "first", tmp_path, "vr", "--limit", "120")
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    from data_paths import items_of

    types = {item.id: item.meta.get("answer_type", "") for item in items_of(bench)}
    result = CliRunner().invoke(app, ["subgroups", str(run), "--by", "answer_type", "--json"])
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["auroc_scores"].startswith("no AUROC") and "screening" not in found
    for group, cell in found["groups"].items():
        scores = [float(r["score"] >= 1) for r in records if types[r["id"]] == group
                  and r["error"] is None and r["score"] is not None]  # fmt: skip
        assert cell["accuracy"] == pytest.approx(np.mean(scores)) and cell["n"] == len(scores)


def test_a_group_without_positives_gets_no_interval_and_says_why(screening_run: Path) -> None:
    """Issue 45: a group with no positives (or negatives) has no AUROC and no screening interval,
    a note instead, and no traceback."""
    result = CliRunner().invoke(app, ["subgroups", str(screening_run), "--by", "ward",
                                      "--positive", "abnormal", "--min-n", "10", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    clean = found["groups"]["screened"]
    assert clean["auroc"] is None and clean["auroc_ci"] is None
    assert clean["auroc_note"] == "every item in this group is 'normal': no AUROC"
    point = found["screening"]["by"]["screened"]
    assert point["positives"] == 0
    for key in ("sensitivity_at_specificity", "specificity_at_sensitivity"):
        assert point[key]["ci"] is None and point[key]["note"] == "no positives: no operating point"
    assert found["gaps"]["auroc"] is None  # one group has an AUROC: no gap
    text = CliRunner().invoke(app, ["subgroups", str(screening_run), "--by", "ward",
                                    "--positive", "abnormal", "--min-n", "10"])  # fmt: skip
    assert text.exit_code == 0 and "every item in this group is 'normal'" in text.output
    assert "no positives: no operating point" in text.output


@pytest.mark.parametrize(
    ("args", "words"),
    [(["--by", "nosuchaxis"], "no item"), (["--by", "sex", "--at-specificity", "1.5"], "between 0 and 1"),
     (["--by", "sex", "--positive", "maybe"], "the labels are")],
)  # fmt: skip
def test_bad_options_are_one_line_exit_2(screening_run: Path, args: list[str], words: str) -> None:
    result = CliRunner().invoke(app, ["subgroups", str(screening_run), *args])
    assert result.exit_code == 2 and words in result.output
    assert len(result.output.strip().splitlines()) == 1
