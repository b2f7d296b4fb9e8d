"""VQA-RAD, SLAKE and PathVQA loaders on the real data in ../shared/realdata."""

from __future__ import annotations

import io
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from data_paths import items_of, realdata_dir
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError
from medlens.core.items import rgb_image_bytes
from medlens.sources.slake import organ_boxes


def test_vqarad_test_split_is_the_451_mevf_questions() -> None:
    root = realdata_dir("vqa_rad")
    items = items_of(f"vqa-rad:{root}")
    assert len(items) == 451
    assert len({item.id for item in items}) == 451
    assert Counter(item.meta["answer_type"] for item in items) == {"closed": 272, "open": 179}
    yes_no = [item for item in items if item.kind == "yes_no"]
    # "Yes"/"yes"/"No"/"no" are all closed yes/no answers; SOURCE.md counts 251 of them.
    assert len(yes_no) == 67 + 51 + 104 + 29
    assert {item.answer for item in yes_no} == {"yes", "no"}
    assert all(item.meta["answer_set"] == "yes/no" for item in yes_no)
    closed_open = [i for i in items if i.kind == "open" and i.meta["answer_type"] == "closed"]
    assert {"Left", "MRI"} <= {item.answer for item in closed_open}
    first = items[0]
    assert first.meta["question_type"] == "PRES" and first.meta["image_organ"] == "CHEST"
    assert first.meta["image_id"] == "synpic42202.jpg" and first.meta["split"] == "test"
    assert Path(first.images[0].path).is_file() and first.images[0].name == "synpic42202.jpg"


def test_vqarad_public_json_gives_the_same_test_split() -> None:
    root = realdata_dir("vqa_rad")
    public = items_of(f"vqa-rad:{root}?format=public")
    assert len(public) == 451
    assert Counter(i.meta["phrase_type"] for i in public) == {
        "test_freeform": 308,
        "test_para": 143,
    }
    train = items_of(f"vqa-rad:{root}?format=public&split=train")
    # The two answer_type values written "CLOSED " are read as closed.
    assert Counter(i.meta["answer_type"] for i in train)["closed"] == 1297 + 2 - 272
    assert all(isinstance(item.answer, str) for item in train)


def test_vqarad_rejects_unknown_options_and_values() -> None:
    root = realdata_dir("vqa_rad")
    with pytest.raises(SpecError, match="unknown option"):
        load_benchmark(f"vqa-rad:{root}?lang=en")
    with pytest.raises(SpecError, match="split"):
        load_benchmark(f"vqa-rad:{root}?split=validation")


def test_vqarad_missing_image_names_file_record_and_image(tmp_path: Path) -> None:
    (tmp_path / "VQA_RAD Image Folder").mkdir()
    (tmp_path / "data_RAD").mkdir()
    record = {
        "qid": 1,
        "image_name": "absent.jpg",
        "question": "Is it?",
        "answer": "yes",
        "answer_type": "CLOSED",
        "image_organ": "HEAD",
        "question_type": "PRES",
    }
    (tmp_path / "data_RAD" / "testset.json").write_text(json.dumps([record]))
    with pytest.raises(InputError, match=r"testset\.json, record 0: image 'absent\.jpg'"):
        items_of(f"vqa-rad:{tmp_path}")


def test_slake_english_test_is_1061_items() -> None:
    items = items_of(f"slake:{realdata_dir('slake')}")
    assert len(items) == 1061
    assert Counter(i.meta["answer_type"] for i in items) == {"open": 645, "closed": 416}
    assert Counter(i.answer for i in items if i.kind == "yes_no") == {"no": 180, "yes": 175}
    assert {i.meta["lang"] for i in items} == {"en"}
    first = items[0]
    assert first.meta["modality"] == "CT" and first.meta["location"] == "Lung"
    assert first.meta["content_type"] == "Modality" and first.meta["base_type"] == "vqa"
    assert json.loads(first.meta["organ_boxes"]) == {"Lung Cancer": [289.0, 301.0, 17.0, 22.0]}


def test_slake_chinese_closed_answers_become_yes_no() -> None:
    items = items_of(f"slake:{realdata_dir('slake')}?lang=zh")
    assert len(items) == 1033
    answers = Counter(i.answer for i in items if i.kind == "yes_no")
    # 是的/是 73+4, 包含 65, 有 21, 可以 5 → yes; 不是 86, 不包含 61, 没有 19, 不可以 11, 不正常 7 → no.
    assert answers["yes"] >= 73 + 4 + 65 + 21 + 5
    assert answers["no"] >= 86 + 61 + 19 + 11 + 7
    assert "肺" in {i.answer for i in items if i.kind == "open"}


def test_slake_splits_and_languages() -> None:
    root = realdata_dir("slake")
    assert len(items_of(f"slake:{root}?split=validate&lang=all")) == 2099
    train = items_of(f"slake:{root}?split=train")
    assert len(train) == 4919
    # train.json record 1622 has an empty answer: kept without gold, for `medlens check` to report.
    assert [i.id for i in train if i.answer is None] == ["1622"]


def test_slake_organ_boxes_of_several_organs() -> None:
    boxes = organ_boxes(realdata_dir("slake") / "imgs" / "xmlab1")
    assert boxes == {"Liver": [54.0, 106.0, 30.0, 31.0]}
    assert organ_boxes(Path("/nonexistent")) == {}


def test_pathvqa_aligned_subset_is_5564_items() -> None:
    items = items_of(f"pathvqa:{realdata_dir('pathvqa')}")
    assert len(items) == 5564
    assert Counter(i.kind for i in items) == {"open": 2792, "yes_no": 2772}
    assert Counter(i.answer for i in items if i.kind == "yes_no") == {"yes": 1506, "no": 1266}
    assert all(i.meta["convert_rgb"] == "1" and i.meta["modality"] == "pathology" for i in items)
    assert items[0].id == "6259" and items[0].answer == "the histone subunits"
    assert len({i.images[0].path for i in items}) == 669


def test_pathvqa_cmyk_and_grey_images_convert_to_rgb() -> None:
    from PIL import Image

    folder = realdata_dir("pathvqa") / "images" / "test"
    modes: Counter[str] = Counter()
    for path in sorted(folder.glob("*.jpg")):
        data = path.read_bytes()
        with Image.open(io.BytesIO(data)) as image:
            mode = image.mode
        if mode != "RGB" and modes[mode] < 3:
            converted = rgb_image_bytes(data, path.name)
            with Image.open(io.BytesIO(converted)) as image:
                assert image.mode == "RGB" and image.format == "PNG"
        elif mode == "RGB" and modes[mode] < 3:
            assert rgb_image_bytes(data) is data
        modes[mode] += 1
    assert modes == {"RGB": 582, "CMYK": 85, "L": 2}


def test_pathvqa_plain_export_file_and_backslash_paths(tmp_path: Path) -> None:
    source = realdata_dir("pathvqa")
    (tmp_path / "images" / "test").mkdir(parents=True)
    shutil.copy(source / "images" / "test" / "pathvqa_00000.jpg", tmp_path / "images" / "test")
    record = {
        "image_path": "images\\test\\pathvqa_00000.jpg",
        "question": "is this dna?",
        "answer": "yes",
        "question_type": "YESNO",
        "answer_type": "CLOSED",
    }
    (tmp_path / "test.json").write_text(json.dumps([record]))
    (item,) = items_of(f"pathvqa:{tmp_path}?file=test.json")
    assert item.id == "0" and item.kind == "yes_no" and item.answer == "yes"
    assert item.images[0].name == "images/test/pathvqa_00000.jpg"
