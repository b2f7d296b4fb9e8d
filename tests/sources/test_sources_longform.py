"""MultiMedQA long-form sets: LiveQA, MedicationQA and HealthSearchQA in their release layouts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from openpyxl import Workbook
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import items_of
from medlens.cli import app
from medlens.extract import extract
from medlens.scoring import metrics
from medlens.scoring.item_scores import item_scores, score

LIVEQA_XML = """<?xml version="1.0" encoding="UTF-8"?>
<LiveQA2017-Medical-Test-Set-Full>
  <NLM-QUESTION qid="TQ1">
    <Original-Question qfile="71.txt">
      <SUBJECT>Noonan syndrome</SUBJECT>
      <MESSAGE>What are the references with noonan syndrome and polycystic renal disease</MESSAGE>
    </Original-Question>
    <NIST-PARAPHRASE>What is the relationship between Noonan syndrome and polycystic renal disease?</NIST-PARAPHRASE>
    <NLM-Summary>What is the relationship between Noonan syndrome and polycystic renal disease?</NLM-Summary>
    <ANNOTATIONS>
      <FOCUS fid="F1" fcategory="Problem">noonan syndrome</FOCUS>
      <TYPE tid="T1" hasFocus="F1">EFFECT</TYPE>
    </ANNOTATIONS>
    <ReferenceAnswers>
      <RefAnswer aid="TQ1A1">
        <ANSWER> Renal anomalies have been described rarely in Noonan syndrome and usually
          consist of rotational errors, duplications and hydronephrosis. </ANSWER>
        <AnswerURL>https://www.ncbi.nlm.nih.gov/pubmed/765504</AnswerURL>
      </RefAnswer>
      <RefAnswer aid="TQ1A2">
        <ANSWER>10% of patients with Noonan syndrome have renal abnormalities.</ANSWER>
      </RefAnswer>
    </ReferenceAnswers>
  </NLM-QUESTION>
  <NLM-QUESTION qid="TQ2">
    <Original-Question qFile="1-136931717.xml.txt">
      <SUBJECT>Gluten information</SUBJECT>
      <MESSAGE>Do zolmitriptan 5mg tablets contain gluten? I have celiac disease.</MESSAGE>
    </Original-Question>
    <NLM-Summary> Do Zolmitriptan 5mg tablets contain gluten?</NLM-Summary>
    <ANNOTATIONS>
      <FOCUS fid="F1" fcategory="DrugSupplement">Zolmitriptan</FOCUS>
      <TYPE tid="T1" hasFocus="F1">INGREDIENT</TYPE>
    </ANNOTATIONS>
    <ReferenceAnswers>
      <ReferenceAnswer aid="TQ2A1">
        <ANSWER>The film coated tablets contain anhydrous lactose, microcrystalline cellulose
          and magnesium stearate.</ANSWER>
      </ReferenceAnswer>
    </ReferenceAnswers>
  </NLM-QUESTION>
</LiveQA2017-Medical-Test-Set-Full>
"""

MEDICATION_HEADER = ["Question", "Focus (Drug)", "Question Type", "Answer", "Section Title", "URL"]
MEDICATION_ROWS = [
    ["how does rivatigmine and otc sleep medicine interact", "rivastigmine", "Interaction",
     "tell your doctor and pharmacist what prescription and nonprescription medications you "
     "are taking", "Precautions", "https://medlineplus.gov/druginfo/meds/a602009.html"],
    ["what is morphine", "morphine", "Information", "Morphine is an opioid analgesic.",
     "Why is this medication prescribed?", "https://medlineplus.gov/druginfo/meds/a682133.html"],
]  # fmt: skip


def write_liveqa(folder: Path) -> Path:
    target = folder / "TestDataset" / "TREC-2017-LiveQA-Medical-Test-Questions-w-summaries.xml"
    target.parent.mkdir(parents=True)
    target.write_text(LIVEQA_XML, encoding="utf-8")
    return folder


def write_medicationqa(folder: Path, header: list[str] = MEDICATION_HEADER) -> Path:
    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(header)
    for row in MEDICATION_ROWS:
        sheet.append(row)
    path = folder / "MedInfo2019-QA-Medications.xlsx"
    book.save(path)
    return path


def test_liveqa_reads_the_release_xml_with_both_reference_tags(tmp_path: Path) -> None:
    items = items_of(f"liveqa:{write_liveqa(tmp_path)}")
    assert [item.id for item in items] == ["TQ1", "TQ2"]
    first = items[0]
    assert first.kind == "report" and first.meta["answer_format"] == "long"
    assert first.question.startswith("Noonan syndrome: What are the references")
    assert len(json.loads(first.meta["reference_answers"])) == 2
    assert first.meta["question_type"] == "effect" and first.meta["focus_category"] == "Problem"
    assert items[1].answer and "lactose" in items[1].answer
    summary = items_of(f"liveqa:{tmp_path}?question=summary")
    assert summary[1].question == "Do Zolmitriptan 5mg tablets contain gluten?"


def test_liveqa_scores_against_the_best_matching_reference(tmp_path: Path) -> None:
    item = items_of(f"liveqa:{write_liveqa(tmp_path)}")[0]
    second = json.loads(item.meta["reference_answers"])[1]
    extraction = extract(item, second, "medlens")
    assert score(item, extraction) == pytest.approx(1.0)
    assert item_scores(item, extraction)["rouge_l"] == pytest.approx(1.0)
    assert score(item, extraction) > metrics.rouge_l(second, str(item.answer))


def test_medicationqa_reads_the_release_spreadsheet(tmp_path: Path) -> None:
    path = write_medicationqa(tmp_path)
    items = items_of(f"medicationqa:{tmp_path}")
    assert [item.id for item in items] == ["1", "2"]
    assert items[1].answer == "Morphine is an opioid analgesic."
    assert items[0].meta["focus"] == "rivastigmine"
    assert items[0].meta["question_type"] == "interaction"
    assert items_of(f"medicationqa:{path}")[1].question == "what is morphine"


@pytest.mark.parametrize("make", ["liveqa", "medicationqa"])
def test_long_form_sets_with_references_reach_100_percent_with_the_oracle(
    tmp_path: Path, make: str
) -> None:
    folder = write_liveqa(tmp_path) if make == "liveqa" else tmp_path
    if make == "medicationqa":
        write_medicationqa(tmp_path)
    run = named_run(f"{make}:{folder}", "oracle", tmp_path / "runs", "o")
    results = json.loads((run / "results.json").read_text())
    assert results["overall"]["score"] == pytest.approx(1.0)
    assert results["secondary"]  # ROUGE-L and BLEU-4 beside the main score


def test_healthsearchqa_is_never_scored_and_says_so(tmp_path: Path) -> None:
    csv = tmp_path / "all.csv"
    csv.write_text(
        "id,question\n1.0,Are benign brain tumors serious?\n2.0,Are boils curable?\n",
        encoding="utf-8",
    )
    items = items_of(f"healthsearchqa:{tmp_path}")
    assert [(i.id, i.answer) for i in items] == [("1", None), ("2", None)]
    run = named_run(f"healthsearchqa:{csv}", "first", tmp_path / "runs", "h")
    results = json.loads((run / "results.json").read_text())
    assert not results["has_answers"] and results["overall"]["score"] is None
    report = CliRunner().invoke(app, ["report", str(run)])
    assert "never scored automatically" in report.output
    for fmt in ("md", "html"):
        out = tmp_path / f"r.{fmt}"
        CliRunner().invoke(app, ["report", str(run), "--format", fmt, "--output", str(out)])
        assert "never scored automatically" in out.read_text(encoding="utf-8")


def test_healthsearchqa_reads_a_headerless_list_of_questions(tmp_path: Path) -> None:
    path = tmp_path / "questions.csv"
    path.write_text("How serious is atrial fibrillation?\nIs blood in phlegm serious?\n")
    assert [i.question for i in items_of(f"healthsearchqa:{path}")][1] == (
        "Is blood in phlegm serious?"
    )


def _one_line_exit_2(spec: str, tmp_path: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", spec, "--model", "oracle",
         "--out", str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "runs").exists()
    return result.stderr


def test_missing_columns_and_fields_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    write_medicationqa(tmp_path / "m", [c if c != "Answer" else "Reply" for c in MEDICATION_HEADER])
    assert "missing column 'Answer'" in _one_line_exit_2(f"medicationqa:{tmp_path / 'm'}", tmp_path)
    bad_xml = tmp_path / "bad.xml"
    bad_xml.write_text(
        LIVEQA_XML.replace("<ANSWER>10%", "<NOPE>10%")
        .replace("abnormalities.</ANSWER>", "abnormalities.</NOPE>")
        .replace("<ANSWER> Renal", "<X> Renal")
        .replace("hydronephrosis. </ANSWER>", "hydronephrosis. </X>")
    )
    assert "no reference answer" in _one_line_exit_2(f"liveqa:{bad_xml}", tmp_path)
    no_question = tmp_path / "hsqa.csv"
    no_question.write_text("id,text\n1,Is it serious?\n")
    assert "no 'question' column" in _one_line_exit_2(f"healthsearchqa:{no_question}", tmp_path)


def test_long_form_prompt_asks_for_a_full_answer(tmp_path: Path) -> None:
    from medlens.execution.prompts import build_prompt

    item = items_of(f"liveqa:{write_liveqa(tmp_path)}")[0]
    assert "Answer the question in full" in build_prompt(item, "medlens")
