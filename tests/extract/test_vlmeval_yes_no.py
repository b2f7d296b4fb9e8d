"""``--prompt vlmeval`` / ``--extract vlmeval`` on yes/no sets follow VLMEvalKit's Y/N datasets
(ImageYORNDataset's bare-question prompt, YOrN_Extraction's word matching), on real VQA-RAD,
SLAKE and PubMedQA questions."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from medlens.cli import app
from medlens.execution.prompts import build_prompt
from medlens.extract import extract
from medlens.extract.vlmeval_yorn import strip_punctuation
from real_items import real_item

# (model output, VLMEvalKit's reading: "yes", "no", or None for its "Unknown")
YORN_CASES: list[tuple[str, str | None]] = [
    ("Yes", "yes"),
    ("yes.", "yes"),
    ("NO.", "no"),
    ("No, there is no fracture.", "no"),
    ("There is no evidence of pneumothorax.", "no"),  # any "no" word, no "yes": no
    ("Yes, there is no doubt.", None),  # both words: Unknown
    ("Yes and no", None),
    ("yes/no", None),  # "/" touches no space: replaced by a space, both words remain
    ("The image shows a fracture.", None),  # no yes/no word: Unknown (wrong without a judge)
    ("**Yes**", None),  # "*" is not in its punctuation list: the word is "**yes**"
    ("Answer: yes", "yes"),
    ("Yes!", "yes"),
    ("Yes (the effusion is small)", "yes"),
    ("It's a no.", "no"),
    ("no-brainer, yes", None),  # "-" touches no space: "no brainer yes"
    ("Maybe.", None),  # VLMEvalKit knows no "maybe"
    ("", None),
]


@pytest.mark.parametrize(("output", "reading"), YORN_CASES)
def test_vlmeval_yes_no_matching(output: str, reading: str | None) -> None:
    item = real_item("vqa-rad", "1375")  # "Is there an acute infarction?"
    found = extract(item, output, "vlmeval")
    assert found.answer == reading
    assert found.status == ("ok" if reading else ("empty" if not output else "unparsed"))


PUNCTUATION_CASES = [
    ("yes, it is", "yes it is"),  # touches a space: deleted
    ("a,b", "a b"),  # touches none: a space
    ("1,000 and a,b", "1000 and ab"),  # a digit-comma-digit anywhere: every mark deleted
    ("3.5 cm.", "3.5 cm"),  # full stops between digits stay
    ("x" + ". x" * 40, "x" + " x" * 32 + ". x" * 8),  # at most 32 full stops go
]


@pytest.mark.parametrize(("text", "expected"), PUNCTUATION_CASES)
def test_punctuation_rule(text: str, expected: str) -> None:
    assert strip_punctuation(text) == expected


def test_medlens_reads_what_vlmeval_rules_leave_unknown() -> None:
    item = real_item("pubmedqa", "20608141")
    for output in ("Maybe.", "**No**", "The evidence is inconclusive."):
        assert extract(item, output, "vlmeval").answer is None
        assert extract(item, output, "medlens").answer is not None


def test_vlmeval_yes_no_prompt_is_the_bare_question() -> None:
    for bench, item_id in (("vqa-rad", "1375"), ("slake", "12549"), ("pathvqa", "10419")):
        item = real_item(bench, item_id)
        assert build_prompt(item, "vlmeval") == item.question


def test_pubmedqa_vlmeval_prompt_mentions_maybe_and_keeps_the_abstract() -> None:
    item = real_item("pubmedqa", "20608141")
    prompt = build_prompt(item, "vlmeval")
    assert item.context and prompt.startswith(f"Hint: {item.context}\n")
    assert prompt.endswith(f"{item.question}\nPlease answer yes, no or maybe.")


def test_sensitivity_column_differs_on_pubmedqa(tmp_path: Path) -> None:
    """Outputs VLMEvalKit's matching cannot read move the VLMEvalKit-rules score, not medlens's."""
    folder = realdata_dir("pubmedqa")
    from medlens.api import load_benchmark

    items = list(load_benchmark(f"pubmedqa:{folder}").items())[:12]
    outputs = {
        "yes": ["**Yes**", "Yes."], "no": ["No.", "no-brainer: no"], "maybe": ["Maybe.", "maybe"]
    }  # fmt: skip
    replay = tmp_path / "predictions.csv"
    with replay.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        for i, item in enumerate(items):
            writer.writerow([item.id, outputs[str(item.answer)][i % 2]])
    run = named_run(
        f"pubmedqa:{folder}", f"replay:{replay}", tmp_path / "runs", "p", "--limit", "12"
    )
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    report = json.loads(result.output)
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    expected_vlmeval = sum(r["vlmeval"]["score"] for r in records) / len(records)
    assert report["overall"]["score"] == 1.0
    assert report["overall"]["vlmeval_score"] == pytest.approx(expected_vlmeval)
    assert report["overall"]["vlmeval_score"] < 1.0
    assert report["extraction_sensitivity"]["difference"] > 0
