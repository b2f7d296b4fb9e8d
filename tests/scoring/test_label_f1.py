"""CheXpert-label F1s (macro over 14 labels, micro/macro over the 5 major findings) from the
rule-based labeller and from a learned labeller loaded from a local folder, against
scikit-learn, under each uncertain-label policy; ``medlens chexpert`` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import f1_score
from typer.testing import CliRunner

from cli_runs import named_run
from loopback_server import ServerConfig, serve
from medlens.cli import app
from medlens.scoring.chexpert import FINDINGS, chexpert_labels
from medlens.scoring.label_f1 import (
    MAJOR_FINDINGS,
    label_stats,
    macro_f1_from_sums,
    micro_f1_from_sums,
)

REFERENCES = [
    "The cardiomediastinal silhouette is within normal limits. The lungs are clear. "
    "No pleural effusion or pneumothorax.",
    "Mild cardiomegaly. Small left pleural effusion with adjacent atelectasis. Chest tube in place.",
    "Right lower lobe opacity, possible pneumonia. No pneumothorax.",
    "Pulmonary edema with bilateral effusions. Cardiomegaly.",
    "Left lower lobe consolidation. Possible small effusion.",
    "Healed rib fracture. No acute cardiopulmonary process.",
    "Atelectasis at the bases, may represent consolidation.",
    "Pneumothorax on the right. Endotracheal tube in place.",
]
GENERATED = [
    "The heart size is normal. The lungs are clear. No effusion.",
    "Cardiomegaly. Small left pleural effusion.",
    "Right lower lobe pneumonia. No pneumothorax.",
    "Mild edema. Cardiomegaly. No effusion.",
    "Consolidation in the left lower lobe. Possible atelectasis.",
    "No fracture. Lungs are clear.",
    "Bibasilar atelectasis. Possible edema.",
    "No pneumothorax.",
]


def _matrix(labels: list[dict[str, int]], findings: tuple[str, ...], policy: str) -> np.ndarray:
    wanted = (1, -1) if policy == "positive" else (1,)
    return np.array([[int(report.get(f) in wanted) for f in findings] for report in labels])


@pytest.mark.parametrize("policy", ["negative", "positive"])
def test_rule_labeller_f1s_equal_scikit_learn(policy: str) -> None:
    predicted = [chexpert_labels(t) for t in GENERATED]
    gold = [chexpert_labels(t) for t in REFERENCES]
    for findings in (FINDINGS, MAJOR_FINDINGS):
        sums = label_stats(predicted, gold, findings, policy).sum(axis=0)[None, :]
        y, p = _matrix(gold, findings, policy), _matrix(predicted, findings, policy)
        macro = f1_score(y, p, average="macro", zero_division=np.nan)
        assert macro_f1_from_sums(sums)[0] == pytest.approx(macro)
        assert micro_f1_from_sums(sums)[0] == pytest.approx(f1_score(y, p, average="micro"))
    # the data exercise the policies: U-ones changes the 5-finding micro-F1
    zeros = label_stats(predicted, gold, MAJOR_FINDINGS, "negative").sum(axis=0)[None, :]
    ones = label_stats(predicted, gold, MAJOR_FINDINGS, "positive").sum(axis=0)[None, :]
    assert micro_f1_from_sums(zeros)[0] != pytest.approx(micro_f1_from_sums(ones)[0])


def test_ignore_leaves_each_doubted_pair_out_of_that_finding_only() -> None:
    predicted = [chexpert_labels(t) for t in GENERATED]
    gold = [chexpert_labels(t) for t in REFERENCES]
    sums = label_stats(predicted, gold, MAJOR_FINDINGS, "ignore").sum(axis=0)[None, :]
    per_finding = []
    for finding in MAJOR_FINDINGS:
        kept = [i for i in range(len(gold))
                if -1 not in (gold[i].get(finding), predicted[i].get(finding))]  # fmt: skip
        y = [int(gold[i].get(finding) == 1) for i in kept]
        p = [int(predicted[i].get(finding) == 1) for i in kept]
        per_finding.append(f1_score(y, p, zero_division=np.nan))
    assert macro_f1_from_sums(sums)[0] == pytest.approx(np.nanmean(per_finding))


def _report_bench(tmp_path: Path) -> str:
    lines = [
        json.dumps({"id": f"r{n}", "question": f"[[r{n}]] Write the findings.", "kind": "report",
                    "answer": text, "meta": {"modality": "Chest X-ray", "image_id": f"i{n}"}})
        for n, text in enumerate(REFERENCES)
    ]  # fmt: skip
    path = tmp_path / "reports.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"jsonl:{path}"


@pytest.fixture
def report_run(tmp_path: Path) -> Path:
    replies = {f"r{n}": text for n, text in enumerate(GENERATED)}

    def reply(request):  # type: ignore[no-untyped-def]
        return replies[request.text.split("[[")[1].split("]]")[0]]

    with serve(ServerConfig(gold=reply)) as server:
        return named_run(_report_bench(tmp_path), f"openai:m?base_url={server.base_url}",
                         tmp_path / "runs", "reports")  # fmt: skip


def test_the_run_and_the_command_report_the_same_f1s_as_scikit_learn(report_run: Path) -> None:
    predicted = [chexpert_labels(t) for t in GENERATED]
    gold = [chexpert_labels(t) for t in REFERENCES]
    y14, p14 = _matrix(gold, FINDINGS, "negative"), _matrix(predicted, FINDINGS, "negative")
    y5, p5 = (
        _matrix(gold, MAJOR_FINDINGS, "negative"),
        _matrix(predicted, MAJOR_FINDINGS, "negative"),
    )
    expected = {
        "chexpert_macro_f1_14": f1_score(y14, p14, average="macro", zero_division=np.nan),
        "chexpert_micro_f1_5": f1_score(y5, p5, average="micro"),
        "chexpert_macro_f1_5": f1_score(y5, p5, average="macro", zero_division=np.nan),
    }
    metrics = json.loads((report_run / "results.json").read_text())["metrics"]["report"]
    shown = CliRunner().invoke(app, ["chexpert", str(report_run), "--json"])
    assert shown.exit_code == 0, shown.output
    result = json.loads(shown.output)
    assert result["uncertain"] == "negative" and result["labeller"].startswith("rule-based")
    for name, value in expected.items():
        assert metrics[name]["value"] == pytest.approx(value)
        assert metrics[name]["labeller"] == "rule-based"
        cell = result["metrics"][name]
        assert cell["value"] == pytest.approx(value) and cell["n"] == len(REFERENCES)
        assert cell["ci"][0] <= value <= cell["ci"][1]
    text = CliRunner().invoke(app, ["chexpert", str(report_run), "--uncertain", "positive"])
    assert "uncertain labels: positive (U-ones)" in text.output
    assert "rule-based" in text.output and "Cardiomegaly: 1.000 (2 / 2)" in text.output


def test_an_unknown_uncertain_policy_is_one_line_exit_2(report_run: Path) -> None:
    before = sorted(p.name for p in report_run.rglob("*"))
    result = CliRunner().invoke(app, ["chexpert", str(report_run), "--uncertain", "maybe"])
    assert result.exit_code == 2
    assert "--uncertain 'maybe'" in result.output and len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in report_run.rglob("*")) == before


# --- a learned labeller: a tiny randomly initialised CheXbert the test builds -----------------

WORDS = sorted({w.strip(".,").lower() for t in REFERENCES + GENERATED for w in t.split()})


def _tiny_chexbert(folder: Path, seed: int = 0) -> None:
    torch = pytest.importorskip("torch")
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, ".", ","]
    tokenizer = BertTokenizerFast(vocab={word: i for i, word in enumerate(vocab)})
    tokenizer.save_pretrained(str(folder))
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=32, max_position_embeddings=512,
                        initializer_range=1.0)  # fmt: skip
    config.save_pretrained(str(folder))
    bert = BertModel(config, add_pooling_layer=False)
    heads = [torch.nn.Linear(16, 4) for _ in range(13)] + [torch.nn.Linear(16, 2)]
    for head in heads:  # spread the logits so the arg-max varies between reports
        torch.nn.init.normal_(head.weight, std=3.0)
    state = {f"module.bert.{k}": v for k, v in bert.state_dict().items()}
    for index, head in enumerate(heads):
        state.update({f"module.linear_heads.{index}.{k}": v for k, v in head.state_dict().items()})
    torch.save({"model_state_dict": state, "epoch": 1}, str(folder / "chexbert.pth"))


def _reference_labels(folder: Path, texts: list[str]) -> list[dict[str, int]]:
    """An independent forward pass: BERT's [CLS] state through the 14 saved heads."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    from medlens.models.chexbert import CONDITIONS

    tokenizer = BertTokenizerFast.from_pretrained(str(folder))
    state = torch.load(str(folder / "chexbert.pth"), weights_only=True)["model_state_dict"]
    bert = BertModel(BertConfig.from_pretrained(str(folder)), add_pooling_layer=False)
    bert.load_state_dict({k[len("module.bert."):]: v for k, v in state.items()
                          if k.startswith("module.bert.")})  # fmt: skip
    bert.eval()
    out = []
    for text in texts:
        encoded = tokenizer(text, return_tensors="pt")
        with torch.no_grad():
            cls = bert(**encoded).last_hidden_state[0, 0]
        labels = {}
        for index, condition in enumerate(CONDITIONS):
            weight = state[f"module.linear_heads.{index}.weight"]
            bias = state[f"module.linear_heads.{index}.bias"]
            k = int(torch.argmax(weight @ cls + bias))
            if k:
                labels[condition] = {1: 1, 2: 0, 3: -1}[k]
        out.append(labels)
    return out


def test_a_learned_labeller_labels_as_its_weights_say_and_scores_like_scikit_learn(
    report_run: Path, tmp_path: Path
) -> None:
    from medlens.models.chexbert import LearnedLabeler

    folder = tmp_path / "chexbert"
    _tiny_chexbert(folder)
    labeller = LearnedLabeler(str(folder))
    predicted, gold = labeller.labels(GENERATED), labeller.labels(REFERENCES)
    assert predicted == _reference_labels(folder, GENERATED)
    assert gold == _reference_labels(folder, REFERENCES)
    assert len({json.dumps(labels, sort_keys=True) for labels in gold}) > 1  # not constant
    result = CliRunner().invoke(app, ["chexpert", str(report_run), "--labeler", str(folder),
                                      "--uncertain", "positive", "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)
    assert found["labeller"] == f"learned ({folder})" and found["uncertain"] == "positive"
    y14, p14 = _matrix(gold, FINDINGS, "positive"), _matrix(predicted, FINDINGS, "positive")
    y5, p5 = (
        _matrix(gold, MAJOR_FINDINGS, "positive"),
        _matrix(predicted, MAJOR_FINDINGS, "positive"),
    )
    expected = {
        "chexpert_macro_f1_14": f1_score(y14, p14, average="macro", zero_division=np.nan),
        "chexpert_micro_f1_5": f1_score(y5, p5, average="micro", zero_division=np.nan),
        "chexpert_macro_f1_5": f1_score(y5, p5, average="macro", zero_division=np.nan),
    }
    for name, value in expected.items():
        shown = found["metrics"].get(name, {}).get("value")
        if np.isnan(value):
            assert shown is None
        else:
            assert shown == pytest.approx(value), name


def test_a_labeller_folder_without_a_fitting_checkpoint_is_one_line_exit_2(
    report_run: Path, tmp_path: Path
) -> None:
    torch = pytest.importorskip("torch")
    folder = tmp_path / "chexbert"
    _tiny_chexbert(folder)
    state = torch.load(str(folder / "chexbert.pth"), weights_only=True)["model_state_dict"]
    del state["module.linear_heads.13.bias"]
    torch.save(state, str(folder / "chexbert.pth"))
    empty = tmp_path / "empty"
    empty.mkdir()
    for path, words in ((folder, "missing weights"), (empty, "no *.pth/*.pt checkpoint"),
                        (tmp_path / "absent", "no such model folder")):  # fmt: skip
        result = CliRunner().invoke(app, ["chexpert", str(report_run), "--labeler", str(path)])
        assert result.exit_code == 2, result.output
        assert words in result.output and len(result.output.strip().splitlines()) == 1
