"""PubMedQA, MedQA, MedMCQA and MMLU loaders on the real data in ../shared/realdata."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from data_paths import items_of, realdata_dir
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError


def test_pubmedqa_test_is_500_yes_no_maybe_with_the_abstract() -> None:
    root = realdata_dir("pubmedqa")
    items = items_of(f"pubmedqa:{root}")
    assert len(items) == 500
    assert Counter(i.answer for i in items) == {"yes": 276, "no": 169, "maybe": 55}
    assert {i.kind for i in items} == {"yes_no"}
    assert {i.meta["answer_set"] for i in items} == {"yes/no/maybe"}
    truth = json.loads((root / "test_ground_truth.json").read_text())
    assert {i.id: i.answer for i in items} == truth
    record = json.loads((root / "test_set.json").read_text())[items[0].id]
    assert items[0].context is not None and record["CONTEXTS"][0] in items[0].context
    # The conclusion gives the answer away and must never reach the prompt.
    assert all(record["LONG_ANSWER"] not in (i.context or "") for i in items[:1])
    assert not any("LONG_ANSWER" in i.meta or "reasoning_free_pred" in i.meta for i in items)


def test_pubmedqa_without_context_and_the_train_split() -> None:
    root = realdata_dir("pubmedqa")
    assert all(i.context is None for i in items_of(f"pubmedqa:{root}?context=none"))
    train = items_of(f"pubmedqa:{root}?split=train")
    assert len(train) == 500
    test_ids = {i.id for i in items_of(f"pubmedqa:{root}")}
    assert not test_ids & {i.id for i in train}
    with pytest.raises(SpecError, match="context"):
        load_benchmark(f"pubmedqa:{root}?context=long")


def test_medqa_is_1273_four_option_questions() -> None:
    root = realdata_dir("medqa")
    items = items_of(f"medqa:{root / 'phrases_no_exclude_test.jsonl'}")
    assert len(items) == 1273 and len({i.id for i in items}) == 1273
    assert Counter(i.answer for i in items) == {"A": 353, "B": 309, "C": 346, "D": 265}
    assert {tuple(i.options) for i in items} == {("A", "B", "C", "D")}
    assert Counter(i.meta["task"] for i in items) == {"step1": 679, "step2&3": 594}
    assert (
        items[0].options["B"] == "Tell the attending that he cannot fail to disclose this mistake"
    )
    assert len(items_of(f"medqa:{root}")) == 1273


def test_medqa_answer_text_must_match_its_letter(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    record = {"question": "Q?", "options": {"A": "x", "B": "y"}, "answer_idx": "A", "answer": "y"}
    path.write_text("\n" + json.dumps(record) + "\n")
    with pytest.raises(InputError, match=r"q\.jsonl, line 2, field 'answer'"):
        items_of(f"medqa:{path}")


def test_medmcqa_dev_is_4183_with_one_based_cop() -> None:
    path = realdata_dir("medmcqa") / "dev.json"
    items = items_of(f"medmcqa:{path}")
    assert len(items) == 4183
    assert Counter(i.answer for i in items) == {"A": 1348, "B": 1085, "C": 925, "D": 825}
    assert Counter(i.meta["subject"] for i in items)["Dental"] == 1318
    first = items[0]
    assert first.id == "45258d3d-b974-44dd-a161-c3fccbdadd88" and first.answer == "A"
    assert first.options["A"].startswith("Impulse through myelinated fibers is slower")
    assert "exp" not in first.meta and first.meta["choice_type"] == "multi"


def test_medmcqa_bad_cop_names_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    good = {"id": "1", "question": "Q", "opa": "a", "opb": "b", "opc": "c", "opd": "d", "cop": 1}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "id": "2", "cop": 5}) + "\n")
    with pytest.raises(InputError, match=r"dev\.json, line 2, field 'cop'"):
        items_of(f"medmcqa:{tmp_path}")
    first = next(load_benchmark(f"medmcqa:{path}?cop=0").items())
    assert first.answer == "B"


def test_mmlu_clinical_test_is_1089_items_over_six_subjects() -> None:
    root = realdata_dir("mmlu_medical")
    items = items_of(f"mmlu:{root}")
    assert len(items) == 1089 and len({i.id for i in items}) == 1089
    assert Counter(i.meta["subject"] for i in items) == {
        "anatomy": 135,
        "clinical_knowledge": 265,
        "college_biology": 144,
        "college_medicine": 173,
        "medical_genetics": 100,
        "professional_medicine": 272,
    }
    genetics = [i for i in items if i.meta["subject"] == "medical_genetics"]
    assert any("1.0/64" in option for i in genetics for option in i.options.values())
    assert (
        items[0].options["C"] == "paralysis of the facial muscles, loss of taste and lacrimation."
    )
    dev = items_of(f"mmlu:{root}?split=dev&subjects=anatomy,medical_genetics")
    assert len(dev) == 10


def test_mmlu_short_row_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "anatomy_test.csv").write_text('"multi\nline question",a,b,c,d,A\nQ,a,b,c,B\n')
    with pytest.raises(InputError, match=r"anatomy_test\.csv, line 3: 5 fields"):
        items_of(f"mmlu:{tmp_path}?subjects=anatomy")
