"""`medlens build` on real labels (SLAKE's organ and lesion boxes) and a synthetic mask set."""

from __future__ import annotations

import base64
import csv
import io
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import items_of, realdata_dir
from medlens.builder.bundled import bundled_file
from medlens.cli import app

N_IMAGES = 30


def slake_labels(
    folder: Path, n_images: int = N_IMAGES, context: bool = False
) -> tuple[Path, Path, list[dict[str, str]]]:
    """A labels CSV of the first SLAKE images' boxes ([x, y, w, h] → x0,y0,x1,y1); with
    `context`, their modality and body part too (which also split the distractor pools)."""
    slake = realdata_dir("slake")
    root = slake / "imgs"
    modality = {
        record["img_name"]: record["modality"]
        for split in ("train", "validate", "test")
        for record in json.loads((slake / f"{split}.json").read_text(encoding="utf-8"))
    }
    rows = []
    # every 11th image: the first ones are all abdominal CTs with the same four organs
    for image in sorted(root.glob("xmlab*"), key=lambda p: int(p.name[5:]))[::11][:n_images]:
        for entry in json.loads((image / "detection.json").read_text()):
            for label, (x, y, w, h) in entry.items():
                rows.append({
                    "image": f"{image.name}/source.jpg",
                    "label": label,
                    "box": f"{x:g},{y:g},{x + w:g},{y + h:g}",
                    "modality": modality[f"{image.name}/source.jpg"],
                    "body_part": "abdomen" if modality[f"{image.name}/source.jpg"] == "CT" else "",
                    "source": "slake",
                })  # fmt: skip
                if not context:
                    del rows[-1]["modality"], rows[-1]["body_part"]
    labels = folder / "labels.csv"
    with open(labels, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return labels, root, rows


def build(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["build", *args])
    return result.exit_code, result.stdout, result.stderr


def built(labels: Path, root: Path, output: Path, *extra: str) -> list[dict[str, object]]:
    code, _, err = build(str(labels), "--images", str(root), "--output", str(output), *extra)
    assert code == 0, err
    if output.suffix == ".tsv":
        return [item.to_json() for item in items_of(f"gmai:{output}")]
    return [json.loads(line) for line in output.read_text(encoding="utf-8").splitlines()]


def test_slake_boxes_become_box_items_with_the_red_box_drawn(tmp_path: Path) -> None:
    labels, root, rows = slake_labels(tmp_path)
    items = built(labels, root, tmp_path / "box.jsonl", "--granularity", "box")
    assert len(items) == len(rows)  # every SLAKE box is one item (no box is listed twice)
    for item, row in zip(items, rows, strict=True):
        options = item["options"]
        assert isinstance(options, dict) and len(options) == 4
        assert options[item["answer"]] == row["label"]
        assert len(set(options.values())) == 4
        meta = item["meta"]
        assert meta["granularity"] == "box" and meta["image_id"] == row["image"]  # type: ignore[index]
    # the outline is red on the picture, and the pixels are the source's elsewhere
    first, row = items[0], rows[0]
    picture = Image.open(tmp_path / first["images"][0]["path"]).convert("RGB")  # type: ignore[index]
    x0, y0, _, y1 = (round(float(v)) for v in row["box"].split(","))
    assert picture.getpixel((x0, (y0 + y1) // 2)) == (255, 0, 0)
    source = Image.open(root / row["image"]).convert("RGB")
    assert picture.getpixel((2, 2)) == source.getpixel((2, 2))
    assert picture.size == source.size
    checked = CliRunner().invoke(app, ["check", f"jsonl:{tmp_path / 'box.jsonl'}"])
    assert checked.exit_code == 0, checked.stdout


def test_slake_image_level_items_list_every_organ_of_the_image(tmp_path: Path) -> None:
    labels, root, rows = slake_labels(tmp_path)
    items = built(labels, root, tmp_path / "image.jsonl", "--options", "10")
    by_image: dict[str, set[str]] = {}
    for row in rows:
        by_image.setdefault(row["image"], set()).add(row["label"])
    assert len(items) == len(by_image)
    for item in items:
        gold = by_image[item["meta"]["image_id"]]  # type: ignore[index]
        chosen = {item["options"][letter] for letter in item["answer"]}  # type: ignore[index, union-attr]
        assert chosen == gold
        assert item["kind"] == ("multi_choice" if len(gold) > 1 else "choice")
        assert "Select all" in str(item["question"]) or len(gold) == 1
    # image-level pixels are unchanged (JPEG decoded, written losslessly)
    first = items[0]
    picture = np.asarray(Image.open(tmp_path / first["images"][0]["path"]))  # type: ignore[index]
    source = np.asarray(Image.open(root / str(first["meta"]["image_id"])))  # type: ignore[index]
    assert np.array_equal(picture, source)


def test_slake_detection_items_open_and_closed(tmp_path: Path) -> None:
    labels, root, rows = slake_labels(tmp_path)
    open_items = built(labels, root, tmp_path / "det.jsonl", "--task", "detect", "--options", "0")
    closed = built(labels, root, tmp_path / "cdet.jsonl", "--task", "detect")
    boxes: dict[tuple[str, str], list[list[float]]] = {}
    for row in rows:  # a label drawn twice on one image (two nodules) is one item
        boxes.setdefault((row["image"], row["label"]), []).append(
            [float(v) for v in row["box"].split(",")]
        )
    assert len(open_items) == len(closed) == len(boxes)
    assert any(len(group) > 1 for group in boxes.values())
    for item, choice, ((_, label), gold) in zip(open_items, closed, boxes.items(), strict=True):
        assert item["kind"] == "detect" and item["answer"] == gold
        assert item["meta"]["box_format"] == "pixel"  # type: ignore[index]
        texts = {"[" + ", ".join(str(round(v)) for v in box) + "]" for box in gold}
        assert {choice["options"][letter] for letter in choice["answer"]} == texts  # type: ignore[index, union-attr]
        assert choice["kind"] == ("multi_choice" if len(gold) > 1 else "choice")
        assert label in str(choice["question"])


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("box", ["--granularity", "box"]),
        ("image", ["--options", "10"]),
        ("cdet", ["--task", "detect"]),
        ("det", ["--task", "detect", "--options", "0"]),
    ],
)
def test_oracle_scores_100_and_random_lands_within_its_ci_of_chance(
    tmp_path: Path, name: str, extra: list[str]
) -> None:
    labels, root, _ = slake_labels(tmp_path)
    output = tmp_path / f"{name}.jsonl"
    built(labels, root, output, *extra)
    oracle = named_run(f"jsonl:{output}", "oracle", tmp_path / "runs", "oracle")
    random_run = named_run(f"jsonl:{output}", "random", tmp_path / "runs", "random")
    best = json.loads((oracle / "results.json").read_text())["overall"]
    guess = json.loads((random_run / "results.json").read_text())["overall"]
    assert best["score"] == 1.0
    chance = guess["random"] if guess["random"] is not None else 0.0  # open boxes: no chance level
    assert guess["ci"][0] <= chance <= guess["ci"][1]


def write_mask_set(folder: Path) -> Path:
    """Six 64×64 greyscale pictures, each with one or two rectangular masks and labels."""
    rows = []
    for index in range(6):
        image = np.full((64, 64), 40 + 20 * index, dtype=np.uint8)
        Image.fromarray(image).save(folder / f"img{index}.png")
        for part, label in enumerate(
            ["cyst", "nodule", "vessel", "calcification"][index % 2 :][:2]
        ):
            mask = np.zeros((64, 64), dtype=np.uint8)
            mask[8 + 28 * part : 28 + 28 * part, 10 + index : 40 + index] = 255
            Image.fromarray(mask).save(folder / f"mask{index}_{part}.png")
            rows.append(f"img{index}.png,{label},mask{index}_{part}.png,US")
    labels = folder / "labels.csv"
    labels.write_text("image,label,mask,modality\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return labels


def test_synthetic_masks_become_tinted_and_outlined_items(tmp_path: Path) -> None:
    labels = write_mask_set(tmp_path)
    masked = built(
        labels, tmp_path, tmp_path / "m.jsonl", "--granularity", "mask", "--options", "3"
    )
    outlined = built(
        labels, tmp_path, tmp_path / "c.jsonl", "--granularity", "contour", "--options", "3"
    )
    assert len(masked) == len(outlined) == 12
    picture = np.asarray(Image.open(tmp_path / masked[0]["images"][0]["path"]))  # type: ignore[index]
    inside, outside = picture[15, 20], picture[50, 60]
    assert inside[1] > inside[0] and inside[1] > inside[2]  # tinted green
    assert outside[0] == outside[1] == outside[2] == 40
    contour = np.asarray(Image.open(tmp_path / outlined[0]["images"][0]["path"]))  # type: ignore[index]
    assert tuple(contour[8, 20]) == (255, 230, 0)  # the mask's top edge, yellow
    assert tuple(contour[18, 25]) == (40, 40, 40)  # the inside is left as it was
    assert {item["meta"]["granularity"] for item in outlined} == {"contour"}  # type: ignore[index]
    box = built(labels, tmp_path, tmp_path / "b.jsonl", "--granularity", "box", "--options", "3")
    boxed = np.asarray(Image.open(tmp_path / box[0]["images"][0]["path"]))  # type: ignore[index]
    assert tuple(boxed[8, 25]) == (255, 0, 0)  # the box around the mask


def test_same_inputs_and_seed_give_identical_bytes(tmp_path: Path) -> None:
    labels, root, _ = slake_labels(tmp_path, 12, context=True)
    for suffix in ("jsonl", "tsv"):
        first = tmp_path / "one" / f"b.{suffix}"
        second = tmp_path / "two" / f"b.{suffix}"
        for output in (first, second):
            built(labels, root, output, "--granularity", "box", "--template", "all", "--seed", "3")
        assert first.read_bytes() == second.read_bytes()
    pictures = sorted((tmp_path / "one" / "b_images").iterdir())
    assert pictures
    for picture in pictures:
        assert picture.read_bytes() == (tmp_path / "two" / "b_images" / picture.name).read_bytes()
    other = tmp_path / "three" / "b.jsonl"
    built(labels, root, other, "--granularity", "box", "--template", "all", "--seed", "4")
    assert other.read_bytes() != (tmp_path / "one" / "b.jsonl").read_bytes()


def test_tsv_output_is_what_vlmeval_reads(tmp_path: Path) -> None:
    """VLMEvalKit reads a TSV with pandas and decodes the image column with base64 + PIL."""
    import pandas

    labels, root, rows = slake_labels(tmp_path, 10, context=True)
    output = tmp_path / "b.tsv"
    items = built(labels, root, output, "--granularity", "box")
    pools: dict[str, set[str]] = {}
    for row in rows:
        pools.setdefault(row["modality"], set()).add(row["label"])
    rows = [row for row in rows if len(pools[row["modality"]]) >= 4]  # smaller pools: skipped
    frame = pandas.read_csv(output, sep="\t")
    assert list(frame.columns[:8]) == ["index", "question", "A", "B", "C", "D", "answer", "image"]
    assert len(frame) == len(rows) == len(items)
    for (_, record), item, row in zip(frame.iterrows(), items, rows, strict=True):
        assert str(record["index"]) == item["id"] and record["answer"] == item["answer"]
        picture = Image.open(io.BytesIO(base64.b64decode(record["image"])))
        assert picture.size == Image.open(root / row["image"]).size
        assert record["granularity"] == "box" and record["modality"] in ("CT", "MRI", "X-Ray")
    checked = CliRunner().invoke(app, ["check", f"gmai:{output}"])
    assert checked.exit_code == 0, checked.stdout


def test_templates_make_one_item_each_on_a_template_axis(tmp_path: Path) -> None:
    labels, root, rows = slake_labels(tmp_path, context=True)  # 30 images: CT has 3 labels
    items = built(labels, root, tmp_path / "t.jsonl", "--granularity", "box", "--template", "all",
                  "--options", "3")  # fmt: skip
    pools: dict[str, set[str]] = {}
    for row in rows:
        pools.setdefault(row["modality"], set()).add(row["label"])
    rows = [row for row in rows if len(pools[row["modality"]]) >= 3]  # smaller pools: skipped
    assert len(items) == 3 * len(rows)
    none, modality, full = items[:3]
    assert [i["meta"]["template"] for i in (none, modality, full)] == ["none", "modality", "full"]  # type: ignore[index]
    assert none["question"] == "What is shown inside the red box?"
    assert rows[0]["modality"] == "MRI"
    assert modality["question"] == "This is an MRI image. What is shown inside the red box?"
    assert full["question"] == "This is an MRI image. What is shown inside the red box?"
    full_ct = "This is a CT image of the abdomen. What is shown inside the red box?"
    ct_rows = [row for row in rows if row["modality"] == "CT"]
    assert ct_rows and [i["question"] for i in items[2::3]].count(full_ct) == len(ct_rows)
    assert none["options"] == modality["options"] == full["options"]
    assert [i["id"] for i in items[:3]] == ["1:none", "1:modality", "1:full"]


def test_lint_warns_on_listed_words_in_questions(tmp_path: Path) -> None:
    labels = write_mask_set(tmp_path)
    text = (
        labels.read_text()
        .replace("modality\n", "modality,specimen\n")
        .replace(",US\n", ",US,tumour biopsy\n")
    )
    labels.write_text(text)
    code, _, err = build(str(labels), "--output", str(tmp_path / "l.jsonl"), "--granularity", "mask",
                         "--options", "3", "--template", "full", "--lint", "Tumour,CA")  # fmt: skip
    assert code == 0
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 12 and all("'Tumour'" in line for line in warnings)
    assert "labels.csv, row 1" in warnings[0]


def test_confusable_pairs_never_meet_and_gold_letters_are_balanced(tmp_path: Path) -> None:
    for index in range(40):
        Image.new("L", (16, 16), index).save(tmp_path / f"{index}.png")
    labels = tmp_path / "labels.csv"
    names = ["glioma", "meningioma", "pituitary", "normal", "metastasis", "abscess"]
    labels.write_text(
        "image,label\n" + "".join(f"{i}.png,{names[i % 6]}\n" for i in range(40)), encoding="utf-8"
    )
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("# look alike\nglioma,metastasis\nmeningioma\tpituitary\n", encoding="utf-8")
    items = built(labels, tmp_path, tmp_path / "c.jsonl", "--confusable", str(pairs))
    for item in items:
        gold = item["options"][item["answer"]]  # type: ignore[index]
        shown = set(item["options"].values())  # type: ignore[union-attr]
        for a, b in (("glioma", "metastasis"), ("meningioma", "pituitary")):
            assert not (gold in (a, b) and {a, b} <= shown)
    letters = Counter(str(item["answer"]) for item in items)
    assert max(letters.values()) - min(letters.values()) <= 1 and set(letters) == set("ABCD")


def test_dicom_and_16_bit_tiff_are_read_and_windowed(tmp_path: Path) -> None:
    shutil.copy(bundled_file("pydicom", "CT_small.dcm"), tmp_path / "ct.dcm")
    ramp = (np.arange(32 * 32, dtype=np.uint16).reshape(32, 32) * 60).astype(np.uint16)
    Image.fromarray(ramp).save(tmp_path / "ramp.tif")
    labels = tmp_path / "labels.csv"
    labels.write_text("image,label\nct.dcm,thorax\nramp.tif,phantom\n", encoding="utf-8")
    items = built(labels, tmp_path, tmp_path / "d.jsonl", "--options", "2")
    ct = Image.open(tmp_path / items[0]["images"][0]["path"])  # type: ignore[index]
    tif = np.asarray(Image.open(tmp_path / items[1]["images"][0]["path"]))  # type: ignore[index]
    assert ct.mode == "L" and ct.size == (128, 128) and np.asarray(ct).std() > 10
    assert tif.dtype == np.uint8 and tif.min() == 0 and tif.max() == 255


BAD_LABELS = {
    "no image column": ("label,box\nliver,1,1,5,5\n", "labels.csv, header", "'image'"),
    "no label column": ("image\na.png\n", "labels.csv, header", "'label'"),
    "box outside its image": (
        'image,label,box\na.png,liver,"1,1,40,5"\n',
        "row 1, field 'box'",
        "outside",
    ),
    "empty mask": (
        "image,label,mask\na.png,liver,empty.png\n",
        "row 1, field 'mask'",
        "empty mask",
    ),
    "pool too small": (  # every label skipped: nothing left to build
        "image,label\na.png,liver\nb.png,spleen\n",
        "no label could be made an item",
        "too small",
    ),
    "escaping path": (
        "image,label\n../a.png,liver\n",
        "row 1, field 'image'",
        "outside the images root",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_LABELS))
def test_bad_labels_are_one_line_exit_2_and_nothing_written(case: str, tmp_path: Path) -> None:
    text, where, problem = BAD_LABELS[case]
    root = tmp_path / "root"
    root.mkdir()
    for name in ("a.png", "b.png"):
        Image.new("L", (32, 32), 90).save(root / name)
    Image.new("L", (32, 32), 0).save(root / "empty.png")
    Image.new("L", (32, 32), 0).save(tmp_path / "a.png")
    (root / "labels.csv").write_text(text, encoding="utf-8")
    granularity = "mask" if "mask" in text else "box" if "box" in text.split("\n")[0] else "image"
    before = sorted(p.name for p in root.rglob("*"))
    output = root / "out" / "b.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "medlens", "build", str(root / "labels.csv"), "--output",
         str(output), "--granularity", granularity],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and where in lines[0] and problem in lines[0], lines
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in root.rglob("*")) == before  # not even the output folder


def test_jsonl_labels_with_list_boxes_and_a_bad_line(tmp_path: Path) -> None:
    for name in ("a.png", "b.png", "c.png"):
        Image.new("RGB", (40, 30), (90, 90, 90)).save(tmp_path / name)
    lines = [
        {"image": "a.png", "label": "cyst", "box": [2, 2, 20, 20], "id": "x1", "site": "A"},
        {"image": "b.png", "label": "stone", "box": "5,5,30,25", "id": "x2", "site": "B"},
        {"image": "c.png", "label": "polyp", "box": [1, 1, 9, 9], "id": "x3"},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    items = built(labels, tmp_path, tmp_path / "j.jsonl", "--granularity", "box", "--options", "3")
    assert [item["id"] for item in items] == ["x1", "x2", "x3"]
    assert items[0]["meta"]["site"] == "A" and "site" not in items[2]["meta"]  # type: ignore[index, operator]
    labels.write_text(labels.read_text() + '{"image": "a.png", "label": \n', encoding="utf-8")
    code, _, err = build(str(labels), "--output", str(tmp_path / "k.jsonl"))
    assert code == 2 and "labels.jsonl, line 4: not valid JSON" in err
    assert not (tmp_path / "k.jsonl").exists()


def test_a_duplicate_id_and_a_bad_confusable_line_are_refused(tmp_path: Path) -> None:
    for name in ("a.png", "b.png", "c.png"):
        Image.new("L", (8, 8), 9).save(tmp_path / name)
    labels = tmp_path / "labels.csv"
    labels.write_text("image,label,id\na.png,x,1\nb.png,y,1\nc.png,z,2\n", encoding="utf-8")
    code, _, err = build(str(labels), "--output", str(tmp_path / "o.jsonl"), "--options", "2")
    assert code == 2 and "labels.csv, row 2, field 'id': duplicate item id '1'" in err
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("x,y\nlonely\n", encoding="utf-8")
    code, _, err = build(
        str(labels), "--output", str(tmp_path / "o.jsonl"), "--confusable", str(pairs)
    )
    assert code == 2 and "pairs.txt, line 2: expected two labels" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.png",
        "b.png",
        "c.png",
        "labels.csv",
        "pairs.txt",
    ]


def test_an_image_met_again_after_many_others_keeps_its_picture(tmp_path: Path) -> None:
    for index in range(10):
        Image.new("L", (32, 32), 10 * index).save(tmp_path / f"{index}.png")
    rows = [("0.png", "cyst", "1,1,9,9")] + [(f"{i}.png", "cyst", "2,2,8,8") for i in range(1, 10)]
    rows.append(("0.png", "stone", "10,10,30,30"))
    labels = tmp_path / "labels.csv"
    lines = "".join(f'{image},{label},"{box}"\n' for image, label, box in rows)
    labels.write_text("image,label,box\n" + lines, encoding="utf-8")
    items = built(labels, tmp_path, tmp_path / "d.jsonl", "--task", "detect", "--options", "0")
    assert len(items) == 11
    assert items[0]["images"] == items[-1]["images"]
    assert len(list((tmp_path / "d_images").iterdir())) == 10
    code, _, err = build(str(labels), "--output", str(tmp_path / "o.jsonl"), "--options", "0")
    assert code == 0 and "several labels: an open classify item takes one" in err
