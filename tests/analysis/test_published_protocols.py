"""The protocol check against MMBU's and Med-CMR's published rows (issue 48, item 3), as GMAI's
comparison already had it: the prompt, the reading and the judge protocol compared with the
published rows', in one line saying what differs; and end to end, a run made with another
prompt beside a published MMBU row names the difference."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from cli_runs import named_run
from medlens.analysis.reference_tables import load_reference
from medlens.analysis.references import protocol_differences
from medlens.cli import app
from mmbu_release import released_root

QWEN = {"judge": "openai:Qwen/Qwen2.5-32B-Instruct-AWQ?base_url=http://127.0.0.1:1/v1",
        "protocol": {"name": "mmbu", "weights": {}}}  # fmt: skip
DEEPSEEK = {"judge": "openai:judge?base_url=http://127.0.0.1:1/v1",
            "protocol": {"name": "rubric", "weights": {"consistency": 1, "coherence": 1,
                                                       "visual_accuracy": 4, "ground_truth_correctness": 4}},
            "judge_fingerprint": {"served_models": {"deepseek-ai/DeepSeek-V3.2-Exp": 10}}}  # fmt: skip


def spec(**values: Any) -> dict[str, Any]:
    return {"prompt": "medlens", "extract": "medlens", "probe": None, **values}


def test_mmbu_prompt_reading_and_judge_are_compared() -> None:
    table = load_reference("mmbu")
    official = spec(prompt="mmbu")
    assert protocol_differences(table, official) == [
        "extract 'medlens' (published: MMBU's own answer parser, which medlens does not replicate)"
    ]
    assert protocol_differences(table, official, QWEN, judged=True) == protocol_differences(
        table, official
    )
    assert protocol_differences(table, spec(prompt="file:short.toml"), None, judged=True) == [
        "prompt 'file:short.toml' (published: 'mmbu')",
        "extract 'medlens' (published: MMBU's own answer parser, which medlens does not replicate)",
        "judge: none, scored by the rules (published: 'mmbu' by Qwen2.5-32B-Instruct-AWQ)",
    ]
    other = {"judge": "openai:gpt-4o", "protocol": {"name": "equivalence"}}
    assert protocol_differences(table, official, other, judged=True)[1:] == [
        "judge protocol 'equivalence' (published: 'mmbu')",
        "judge model 'openai:gpt-4o' (published: Qwen2.5-32B-Instruct-AWQ)",
    ]


def test_medcmr_judge_weights_and_model_are_compared_and_the_unpublished_prompt_is_not() -> None:
    table = load_reference("medcmr")
    assert protocol_differences(table, spec(prompt="vlmeval", extract="vlmeval")) == []
    assert protocol_differences(table, spec(), DEEPSEEK, judged=True) == []
    equal = {**DEEPSEEK, "protocol": {"name": "rubric", "weights": {"consistency": 1, "coherence": 1,
                                                                    "visual_accuracy": 1, "ground_truth_correctness": 1}},
             "judge_fingerprint": {}}  # fmt: skip
    assert protocol_differences(table, spec(), equal, judged=True) == [
        "judge weights {'consistency': 1, 'coherence': 1, 'visual_accuracy': 1, "
        "'ground_truth_correctness': 1} (published: 1/1/4/4)",
        "judge model 'openai:judge?base_url=http://127.0.0.1:1/v1' (published: DeepSeek-V3.2-Exp)",
    ]
    assert protocol_differences(
        table, spec(probe="blank-image", strategy={"name": "cot"}, rewrite="open", manual={"items": 3})
    ) == ["probe 'blank-image' (published: none)", "strategy 'cot' (published: zero-shot)",
          "rewrite 'open' (published: the items as released)",
          "3 answers entered by hand (published: none)"]  # fmt: skip


def test_a_gmai_run_is_compared_as_before() -> None:
    assert protocol_differences(load_reference("gmai-val"), spec()) == [
        "prompt 'medlens' (published: 'vlmeval')",
        "extract 'medlens' (published: 'vlmeval')",
    ]


def test_calibrate_names_the_prompt_a_run_used_beside_a_published_mmbu_row(tmp_path: Path) -> None:
    root = released_root(tmp_path / "subsampled_mmbu_data")
    shutil.rmtree(root / "final_det")
    shutil.rmtree(root / "final_seg")
    template = tmp_path / "terse.txt"
    template.write_text("{question}\n{options}\nLetter only.\n")
    run = named_run(f"mmbu:{root}?mode=closed", "first", tmp_path / "runs", "terse",
                    "--prompt", f"file:{template}")  # fmt: skip
    out = CliRunner().invoke(app, ["calibrate", str(run), "--reference", "mmbu", "--as", "GPT-4.1-mini",
                                   "--column", "unanchored_closed", "--allow-partial"]).output  # fmt: skip
    text = " ".join(out.split())
    assert "protocol differs from the published rows': prompt 'file:terse.txt' (published: 'mmbu'); " \
           "extract 'medlens' (published: MMBU's own answer parser" in text  # fmt: skip
    result = json.loads(CliRunner().invoke(app, ["calibrate", str(run), "--reference", "mmbu", "--as", "GPT-4.1-mini",
                                                 "--column", "unanchored_closed", "--allow-partial", "--json"]).stdout)  # fmt: skip
    assert result["protocol"]["differences"][0] == "prompt 'file:terse.txt' (published: 'mmbu')"
