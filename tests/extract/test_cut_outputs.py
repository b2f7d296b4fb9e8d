"""Cut outputs are read by what they committed to before the cut (issue 42), for every kind,
whether the cut is known (``finish_reason: length``) or visible; an output cut before it
commits is no answer, and in a cut list or reasoning chain only what was stated as the answer
counts. ``medlens show`` says which part was read and which was dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app
from medlens.core.items import Item
from medlens.extract import cut_reading, extract
from medlens.extract.cut import committed_part
from medlens.scoring.item_scores import read_and_score
from real_items import real_item

MASS = Item(id="m", question="Is there a mass in the left lower lobe?", kind="yes_no", answer="yes")

# (output, finish_reason, reading): yes/no
YES_NO = [
    # the issue's own example: one sentence, committed before the cut
    ("Yes, there is a mass in the left lower lobe, which", "length", "yes"),
    ("Yes, there is a mass in the left lower lobe, which", None, "yes"),  # visibly cut
    ("Yes there is a", "length", "yes"),
    ("No, there is no evidence of", "length", "no"),
    ("No, there is no", None, "no"),
    ("There is a mass in the left lower lobe, which is", "length", "yes"),  # a named finding
    ("There is no mass in the left lower lobe, but there is a", "length", "no"),
    # cut before committing
    ("There is no evidence of", "length", None),
    ("There is a small", "length", None),
    ("The image shows", "length", None),
    ("No abnormality is", "length", None),  # "No" is a determiner here, not the answer
    ("It could be a", "length", None),
    ("The left lower lobe is", "length", None),
]


@pytest.mark.parametrize(("output", "finish", "reading"), YES_NO)
def test_a_cut_yes_no_answer_reads_what_it_committed_to(
    output: str, finish: str | None, reading: str | None
) -> None:
    found = extract(MASS, output, finish_reason=finish)
    assert found.answer == reading
    if reading is None:
        assert (found.status, found.method) == ("unparsed", "truncated")


OPTIONS = {
    "A": "Decreased myocardial contractility", "B": "Pericardial effusion",
    "C": "Increased ventricular wall stiffness", "D": "Aortic valve stenosis",
}  # fmt: skip
CHOICE = Item(id="c", question="Which is the cause?", kind="choice", options=OPTIONS, answer="C")

# (output, reading): choice, cut at the token cap
CHOICES = [
    ("The answer is C, because the", "C"),
    ("The answer is A, because the", "A"),  # "A" names option A, not an article
    ("C) Increased ventricular wall stiffness. This is because the left ventricle", "C"),
    ("Therefore, the most likely diagnosis is increased ventricular wall stiffness, which", "C"),
    ("Let's weigh the options. A) is unlikely. B) is unlikely. The answer is C, as the", "C"),
    # cut before committing, or inside the review: options only weighed are no answer
    ("Therefore, the most likely diagnosis is", None),
    ("A) Decreased myocardial contractility: this is possible because", None),
    ("Option A seems to fit because the ejection fraction and the", None),
    ("Let's analyze each option. A) unlikely. B) possible, and C) fits the", None),
    ("The answer is Increased ventricular", None),  # the option's text is not finished
]


@pytest.mark.parametrize(("output", "reading"), CHOICES)
def test_a_cut_choice_answer_reads_the_option_it_stated(output: str, reading: str | None) -> None:
    assert extract(CHOICE, output, finish_reason="length").answer == reading


def test_a_cut_multi_choice_and_classify_answer_read_what_they_stated() -> None:
    multi = Item(id="k", question="Which apply?", kind="multi_choice", options=OPTIONS, answer="AC")
    assert (
        extract(multi, "The correct options are A and C, because", "medlens", "length").answer
        == "AC"
    )
    label = Item(id="l", question="Benign or malignant?", kind="classify",
                 options={"A": "benign", "B": "malignant"}, answer="B")  # fmt: skip
    said = extract(label, "The lesion is malignant, as shown by the irregular", "medlens", "length")
    assert said.answer == "malignant"
    assert extract(label, "The lesion appears", "medlens", "length").answer is None


# (gold, output, credited): open, cut at the token cap
OPEN = [
    ("liver", "The organ shown in this image is the liver, which is located in the", True),
    ("mass", "The image shows a large, irregular mass in the", True),
    ("right", "The lesion is located in the right", True),
    ("liver", "This is the liver or", False),  # a hedge was coming
    ("liver", "The liver and", False),  # a list was coming
    ("liver", "The answer is not the", False),
    ("free air", "There is no evidence of free", False),
]


@pytest.mark.parametrize(("gold", "output", "credited"), OPEN)
def test_a_cut_open_answer_is_credited_for_what_it_stated(
    gold: str, output: str, credited: bool
) -> None:
    item = Item(id="o", question="What is shown?", kind="open", answer=gold)
    assert read_and_score(item, output, "medlens", "length")[1] == (1.0 if credited else 0.0)


def test_the_rib_fracture_cut_outputs_of_vqa_rad() -> None:
    item = real_item("vqa-rad", "36")  # "Is there a rib fracture?" no
    assert extract(item, "No, the ribs appear intact, with no", "medlens", "length").answer == "no"
    assert (
        extract(item, "The ribs are intact. There is a small", "medlens", "length").answer == "no"
    )


def test_committed_part_names_what_was_read_and_what_was_dropped() -> None:
    text = "Yes, there is a mass in the left lower lobe, which"
    assert committed_part(text) == ("Yes, there is a mass in the left lower lobe", ", which")
    assert committed_part("There is no evidence of") == ("", "There is no evidence of")
    assert cut_reading(MASS, text, None) == committed_part(text)
    assert cut_reading(MASS, "Yes, there is a mass.", None) is None  # not cut


def test_show_says_which_part_of_a_cut_output_was_read(tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(json.dumps({"id": "m", "question": MASS.question, "answer": "yes",
                                 "kind": "yes_no"}) + "\n")  # fmt: skip
    replay = tmp_path / "answers.jsonl"
    replay.write_text(json.dumps({"index": "m", "answer": "Yes, there is a mass in the left "
                                  "lower lobe, which"}) + "\n")  # fmt: skip
    run = named_run(f"jsonl:{bench}", f"replay:{replay}", tmp_path / "runs", "cut")
    shown = CliRunner().invoke(app, ["show", str(run), "m"])
    assert shown.exit_code == 0, shown.output
    assert "cut output, read up to the cut: Yes, there is a mass in the left lower lobe" in (
        shown.output
    )
    assert "dropped after it: , which" in shown.output
    as_json = json.loads(CliRunner().invoke(app, ["show", str(run), "m", "--json"]).stdout)
    assert as_json["cut"] == {"read": "Yes, there is a mass in the left lower lobe",
                              "dropped": ", which"}  # fmt: skip
    assert as_json["record"]["extraction"]["answer"] == "yes"
