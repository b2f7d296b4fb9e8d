"""Loaders without real data here, on small fixtures written from their documented schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from data_paths import items_of
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError
from source_files import mmbu_file, omnimedvqa_root, write_image

# OmniMedVQA -----------------------------------------------------------------------------------


def test_omnimedvqa_maps_gt_answer_text_to_its_letter(tmp_path: Path) -> None:
    root = omnimedvqa_root(tmp_path)
    items = items_of(f"omnimedvqa:{root}")
    assert [(i.id, i.answer, len(i.options)) for i in items] == [
        ("ACRIMA_0000", "B", 2),
        ("Chest_0001", "C", 4),
    ]
    first = items[0]
    assert first.meta["source"] == "ACRIMA" and first.meta["modality"] == "Fundus Photography"
    assert first.meta["task"] == "Disease Diagnosis" and first.meta["access"] == "Open-access"
    assert [i.id for i in items_of(f"omnimedvqa:{root}?access=restricted")] == ["Chest_0001"]
    assert [i.id for i in items_of(f"omnimedvqa:{root}?dataset=ACRIMA")] == ["ACRIMA_0000"]


def test_omnimedvqa_gold_not_an_option_is_an_input_error(tmp_path: Path) -> None:
    root = omnimedvqa_root(tmp_path)
    path = root / "QA_information" / "Open-access" / "ACRIMA.json"
    record = json.loads(path.read_text())[0]
    path.write_text(json.dumps([record, {**record, "gt_answer": "Cataract"}]))
    with pytest.raises(InputError, match=r"ACRIMA\.json, record 1, field 'answer'"):
        items_of(f"omnimedvqa:{root}")


# MedXpertQA -----------------------------------------------------------------------------------


def test_medxpertqa_mm_strips_the_retyped_choices(tmp_path: Path) -> None:
    write_image(tmp_path / "images" / "MM-0-a.jpeg")
    record = {
        "id": "MM-0",
        "label": "C",
        "images": ["MM-0-a.jpeg"],
        "question": "A 23-year-old man presents.\nAnswer Choices: (A) a (B) b (C) c (D) d (E) e",
        "options": {k: k.lower() for k in "ABCDE"},
        "medical_task": "Diagnosis",
        "body_system": "Lymphatic",
        "question_type": "Reasoning",
    }
    (tmp_path / "MM").mkdir()
    (tmp_path / "MM" / "test.jsonl").write_text(json.dumps(record) + "\n")
    (item,) = items_of(f"medxpertqa:{tmp_path}")
    assert item.question == "A 23-year-old man presents."
    assert item.answer == "C" and list(item.options) == list("ABCDE")
    assert item.meta["task"] == "Diagnosis" and item.meta["body_system"] == "Lymphatic"
    assert item.meta["question_type"] == "Reasoning" and item.images[0].name == "MM-0-a.jpeg"
    with pytest.raises(InputError, match="Text test file"):
        items_of(f"medxpertqa:{tmp_path}?config=text")


def test_medxpertqa_missing_image_names_line_and_field(tmp_path: Path) -> None:
    record = {
        "id": "MM-1",
        "question": "Q",
        "options": {"A": "a", "B": "b"},
        "label": "A",
        "images": ["absent.png"],
    }
    (tmp_path / "MM").mkdir()
    (tmp_path / "MM" / "test.jsonl").write_text(json.dumps(record) + "\n")
    with pytest.raises(InputError, match=r"test\.jsonl, line 1, field 'images': image 'absent"):
        items_of(f"medxpertqa:{tmp_path}")


# MMBU -----------------------------------------------------------------------------------------


def test_mmbu_closed_open_and_detection_items(tmp_path: Path) -> None:
    path = mmbu_file(
        tmp_path,
        [
            "1\timg/a.png\tWhat organ?\tLiver\tclassification\tNo Context\tKidney\tLiver\tSpleen\tAMOS\tCT",
            "2\timg/a.png\tWhat organ?\tliver\tmask_classification\tModality\t\t\t\tAMOS\tCT",
            "3\timg/a.png\tFind the lesion.\t[[10, 20, 30, 40], [1, 2, 3, 4]]\tdetection\tfull\t\t\t\tISIC\tDermoscopy",
        ],
    )
    closed, opened, detect = items_of(f"mmbu:{path}")
    assert (closed.kind, closed.answer, closed.meta["answer_type"]) == ("choice", "B", "closed")
    assert closed.meta["granularity"] == "image" and closed.meta["template"] == "none"
    assert closed.meta["source"] == "AMOS" and closed.meta["modality"] == "CT"
    assert (opened.kind, opened.answer, opened.meta["granularity"]) == ("open", "liver", "mask")
    assert detect.kind == "detect" and detect.answer == (
        (10.0, 20.0, 30.0, 40.0),
        (1.0, 2.0, 3.0, 4.0),
    )
    assert detect.meta["box_format"] == "pixel" and detect.meta["granularity"] == "box"
    assert [i.id for i in items_of(f"mmbu:{tmp_path}?template=modality")] == ["2"]
    assert [i.id for i in items_of(f"mmbu:{path}?mode=closed")] == ["1"]


def test_mmbu_bad_box_and_task_name_row_and_field(tmp_path: Path) -> None:
    path = mmbu_file(tmp_path, ["1\timg/a.png\tFind.\t[1, 2, 3]\tdetection\tfull\t\t\t\tX\tCT"])
    with pytest.raises(InputError, match=r"mmbu\.tsv, line 2, field 'answer'"):
        items_of(f"mmbu:{path}")
    path = mmbu_file(tmp_path, ["1\timg/a.png\tQ\tx\tsegmentation\tfull\t\t\t\tX\tCT"])
    with pytest.raises(InputError, match=r"line 2, field 'task'"):
        items_of(f"mmbu:{path}")


# imagefolder ----------------------------------------------------------------------------------


def test_imagefolder_serves_genomics_pileup_classes(tmp_path: Path) -> None:
    for label, count in (("ref", 2), ("het", 1), ("hom-alt", 1)):
        for index in range(count):
            write_image(tmp_path / "test" / label / f"{index}.png", (index * 40, 0, 0))
    (tmp_path / "test" / "ref" / "notes.txt").write_text("not an image")
    items = items_of(f"imagefolder:{tmp_path}?split=test")
    assert [(i.id, i.answer) for i in items] == [
        ("het/0.png", "het"),
        ("hom-alt/0.png", "hom-alt"),
        ("ref/0.png", "ref"),
        ("ref/1.png", "ref"),
    ]
    assert {i.kind for i in items} == {"classify"}
    assert items[0].meta["labels"] == "het|hom-alt|ref" and items[0].meta["split"] == "test"
    assert "het, hom-alt, ref" in items[0].question
    custom = items_of(f"imagefolder:{tmp_path / 'test'}?question=Genotype ({{labels}})?")
    assert custom[0].question == "Genotype (het, hom-alt, ref)?"


def test_imagefolder_needs_two_classes(tmp_path: Path) -> None:
    write_image(tmp_path / "only" / "a.png")
    with pytest.raises(InputError, match="at least two class folders"):
        load_benchmark(f"imagefolder:{tmp_path}")
    with pytest.raises(SpecError, match="unknown option"):
        load_benchmark(f"imagefolder:{tmp_path}?labels=a")
