"""Protocol ``mmbu``: MMBU's open-answer judge as medlens reconstructs it — the strict
``Rationale: … [RESULT] 0|1`` parser, the label set and taxonomy of each dataset, the prompt
(no image), and a judge stage against a loopback judge that answers in MMBU's format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from judge_fixtures import judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app
from medlens.core.items import Item
from medlens.judges.mmbu import MMBU, build_mmbu_prompt, label_sets, parse_result_line, taxonomy_of
from medlens.judges.protocol import PromptInputs
from medlens.judges.replies import read_reply
from medlens.models.base import Response


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('Rationale: says "glioma", equals the true answer. [RESULT] 1', 1.0),
        ("Rationale: names meningioma, not glioma. [RESULT] 0", 0.0),
        ("Rationale: fine. [RESULT] 1.  \n", 1.0),
        ("Rationale: fine. [RESULT]1", 1.0),
        ("Rationale: vague. [RESULT]   0", 0.0),
        ("Rationale: fine.\n[RESULT]\n1", 1.0),
        ("Rationale: fine. [result] 1", 1.0),
        ("Rationale: fine. **[RESULT]** 1", 1.0),
        ("Rationale: fine. [RESULT] 1 ... [RESULT] 1", 1.0),
        ("<think>maybe [RESULT] 0</think> Rationale: the same concept. [RESULT] 1", 1.0),
        ("[RESULT] 1", 1.0),  # no Rationale: counted, with a format warning
        ("Rationale: the answer is 1 concept, glioma.", None),
        ("Rationale: fine. [RESULT] yes", None),
        ("Rationale: fine. [RESULT] 2", None),
        ("Rationale: fine. [RESULT] 10", None),
        ('Rationale: "[RESULT] 0" if vague; here clear. [RESULT] 1', None),
        ("Rationale: fine. [RESULT] <0 or 1>", None),
        ("<think>still thinking [RESULT] 1", None),
    ],
)
def test_the_result_line_parser(reply: str, expected: float | None) -> None:
    parsed = parse_result_line(reply)
    if expected is None:
        assert parsed.status == "unparseable" and parsed.score is None, parsed
    else:
        assert parsed.status == "ok" and parsed.score == expected
        assert parsed.verdict["equivalent"] is (expected == 1.0)  # type: ignore[index]


def test_failures_of_the_result_line() -> None:
    assert parse_result_line("Rationale: x [RESULT] 2").failure == "out_of_scale"
    assert parse_result_line("Rationale: x").failure == "unparseable"
    assert parse_result_line("[RESULT] 1").verdict["format_warning"] is True  # type: ignore[index]
    assert parse_result_line("Rationale: x [RESULT] 1").verdict["rationale"] == "x"  # type: ignore[index]
    item = Item(id="1", question="q", kind="open", answer="glioma")
    cut = read_reply(MMBU, item, Response("Rationale: the answer names", finish_reason="length"))
    assert cut.failure == "truncated"
    error = read_reply(MMBU, item, Response("[ERROR] judge 500 [RESULT] 1"))
    assert error.failure == "error" and error.score is None


@pytest.mark.parametrize(
    ("labels", "taxonomy"),
    [
        (["glioma", "meningioma", "no tumor", "pituitary"], "binary_tumor"),
        (["benign", "malignant"], "binary_tumor"),
        (["metastasis", "normal"], "binary_tumor"),
        (["ER positive", "ER negative"], "receptor_infection"),
        (["COVID-19", "normal", "viral pneumonia"], "receptor_infection"),
        (["no DR", "mild", "moderate", "severe", "proliferative DR"], "receptor_infection"),
        (["benign keratosis", "nevus", "dermatofibroma"], "multiclass"),
        (["left", "right"], "other"),
    ],
)
def test_taxonomy_rules(labels: list[str], taxonomy: str) -> None:
    assert taxonomy_of(labels) == taxonomy


def items() -> list[Item]:
    golds = [("brain", "glioma"), ("brain", "meningioma"), ("brain", "no tumor"),
             ("skin", "nevus"), ("skin", "melanoma"), ("skin", "benign keratosis")]  # fmt: skip
    return [
        Item(id=f"i{k}", question=f"What is shown in image {k}?", kind="open", answer=gold,
             meta={"source": source, "answer_type": "open", "image_id": f"m{k}"})
        for k, (source, gold) in enumerate(golds * 2)
    ]  # fmt: skip


def test_label_sets_are_the_distinct_gold_labels_of_each_source() -> None:
    sets = label_sets(items(), MMBU.kinds)
    assert sets["brain"].labels == ("glioma", "meningioma", "no tumor")
    assert sets["brain"].taxonomy == "binary_tumor"
    assert sets["skin"].labels == ("benign keratosis", "melanoma", "nevus")
    assert label_sets(items()[:3], MMBU.kinds)["brain"].labels == sets["brain"].labels


def test_the_prompt_shows_label_set_policy_gates_and_data_blocks() -> None:
    sets = label_sets(items(), MMBU.kinds)
    inputs = PromptInputs(answer="a glioma", gold="glioma", question="What is shown?")
    text = build_mmbu_prompt(MMBU, inputs, sets["brain"])
    assert "Gate 1 - Grounding" in text and "Gate 2 - Equivalence" in text
    assert "Do not collapse tumor vs not-tumor sides." in text  # MMBU's gist, word for word
    assert '"glioma\\nmeningioma\\nno tumor"' in text
    assert text.rstrip().endswith(
        "Rationale: <brief rationale naming the grounded concept> [RESULT] <0 or 1>"
    )
    assert MMBU.version.startswith("open_per_dataset_v3") and "reconstructed" in MMBU.provenance


def test_the_mmbu_judge_never_sees_the_image() -> None:
    from dataclasses import replace

    from medlens.core.items import ImageRef
    from medlens.judges.tasks import JudgeSettings, JudgeTask, build_judge_request
    from medlens.models.base import ImagePart
    from tiny_images import PNG

    item = replace(items()[0], images=(ImageRef("bytes", data=PNG, name="m0"),))
    settings = JudgeSettings(
        MMBU, "all", 1, images=True, label_sets=label_sets(items(), MMBU.kinds)
    )
    request = build_judge_request(JudgeTask(item, "glioma", 0), "openai:j", settings, 0)
    assert not any(isinstance(p, ImagePart) for m in request.messages for p in m.parts)
    from medlens.judges.protocols import EQUIVALENCE

    shown = build_judge_request(
        JudgeTask(item, "glioma", 0),
        "openai:j",
        JudgeSettings(EQUIVALENCE, "all", 1, images=True),
        0,
    )
    assert any(isinstance(p, ImagePart) for m in shown.messages for p in m.parts)


def test_an_mmbu_judge_stage(tmp_path: Path) -> None:
    bench, predictions = tmp_path / "bench.jsonl", tmp_path / "predictions.csv"
    answers = ["glioma", "a glioma or a meningioma", "no tumor", "nevus", "a pigmented lesion",
               "benign keratosis"] * 2  # fmt: skip
    with open(bench, "w") as handle:
        for item in items():
            handle.write(json.dumps(item.to_json()) + "\n")
    predictions.write_text(
        "index,prediction\n" + "".join(f"i{k},{a}\n" for k, a in enumerate(answers))
    )
    run = named_run(f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "m")
    replies = JudgeReplies("mmbu")
    with serve(judge_config(replies)) as server:
        result = CliRunner().invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                          "--protocol", "mmbu", "--images"])  # fmt: skip
        assert result.exit_code == 0, result.output
        assert server.stats["requests"] == 12  # scope all: MMBU judges every open answer
    lines = {line["id"]: line for line in judgement_lines(run / "judges" / "judge-model")}
    scores = {k: lines[f"i{k}"]["score"] for k in range(6)}
    # two concepts and an off-taxonomy answer fail Gate 1; the wrong side fails Gate 2
    assert scores == {0: 1.0, 1: 0.0, 2: 1.0, 3: 1.0, 4: 0.0, 5: 1.0}
    spec = json.loads((run / "judges" / "judge-model" / "judge.json").read_text())
    assert spec["label_sets"]["brain"]["taxonomy"] == "binary_tumor"
    assert spec["judge_fingerprint"]["protocol_version"] == MMBU.version
    assert "reconstructed" in spec["judge_fingerprint"]["provenance"]
    from medlens.judges.verdicts import judged_item_scores, judged_values

    assert judged_item_scores(run, "judge-model") == {k: v["score"] for k, v in lines.items()}
    assert judged_values(run, "judge-model")[1] == ["equivalent"]
    report = " ".join(CliRunner().invoke(app, ["report", str(run)]).output.split())
    assert "Judge judge-model: mmbu" in report
    assert "protocol mmbu: reconstructed from MMBU docs/open_vqa_per_dataset_judge.md" in report
