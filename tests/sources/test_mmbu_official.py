"""MMBU's official layouts (issue 23): the inference TSV (task from the file name, gold in
``class_label``, options in one cell), the public split's columns, the official output JSONL as
a replay file, and ``--prompt mmbu`` sending what the official code sends (options for closed
tasks only, images padded to 512 px, never resized)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from cli_runs import invoke_run, named_run
from data_paths import items_of
from loopback_server import ChatRequest, ServerConfig, serve
from medlens.core.items import Item
from medlens.execution.prompts import build_prompt

HEADER = "index\tquestion\timage_path\tdataset\tclass_label\tmodality\toptions"


def _image(root: Path, name: str, size: tuple[int, int] = (64, 40)) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, (200, 30, 30)).save(path)


def inference_tsvs(root: Path) -> Path:
    """One closed and one open official task file, named as configs/all_tasks.yaml names them."""
    _image(root, "images/classification/a.png")
    _image(root, "images/classification/b.png", (600, 700))
    closed = [
        "1\tWhat is shown?\timages/classification/a.png\tISIC\tmelanoma\tdermoscopy\t"
        "A. nevus B. melanoma C. keratosis",
        "2\tWhat is shown?\timages/classification/b.png\tISIC\tnevus\tdermoscopy\t"
        "A. nevus B. melanoma C. keratosis",
    ]
    opened = [
        "1\tWhat is shown?\timages/classification/a.png\tISIC\tmelanoma\tdermoscopy\t",
        "2\tWhat is shown?\timages/classification/b.png\tISIC\tnevus\tdermoscopy\t",
    ]
    (root / "classification_closed_VQA.tsv").write_text("\n".join([HEADER, *closed]) + "\n")
    (root / "classification_open_VQA.tsv").write_text("\n".join([HEADER, *opened]) + "\n")
    return root


def test_the_inference_tsv_is_read_as_the_official_code_writes_it(tmp_path: Path) -> None:
    root = inference_tsvs(tmp_path / "mmbu")
    closed = items_of(f"mmbu:{root / 'classification_closed_VQA.tsv'}")
    assert [item.kind for item in closed] == ["choice", "choice"]
    first = closed[0]
    assert first.options == {"A": "nevus", "B": "melanoma", "C": "keratosis"}
    assert first.answer == "B" and first.meta["task"] == "classification"
    assert first.meta["official_task"] == "classification_closed_VQA"
    assert first.meta["answer_type"] == "closed" and first.meta["source"] == "ISIC"
    opened = items_of(f"mmbu:{root / 'classification_open_VQA.tsv'}")
    assert [(i.kind, i.answer) for i in opened] == [("open", "melanoma"), ("open", "nevus")]
    both = items_of(f"mmbu:{root}")
    assert [i.id for i in both] == [
        "classification_closed_VQA-1", "classification_closed_VQA-2",
        "classification_open_VQA-1", "classification_open_VQA-2",
    ]  # fmt: skip


def test_the_mmbu_prompt_appends_options_for_closed_tasks_only(tmp_path: Path) -> None:
    root = inference_tsvs(tmp_path / "mmbu")
    closed = items_of(f"mmbu:{root / 'classification_closed_VQA.tsv'}")[0]
    opened = items_of(f"mmbu:{root / 'classification_open_VQA.tsv'}")[0]
    assert build_prompt(closed, "mmbu") == (
        "What is shown? Options: A. nevus B. melanoma C. keratosis"
    )
    assert build_prompt(opened, "mmbu") == "What is shown?"


def test_the_public_split_columns(tmp_path: Path) -> None:
    _image(tmp_path, "img/x.png")
    row = {"question": "What organ is this?", "file_name": "img/x.png", "question_type": "none",
           "options": "liver, kidney, spleen", "metadata_medical_domain": "radiology",
           "metadata_modality": "CT", "metadata_body_part": "abdomen", "task": "classification",
           "unique_id": "u-17", "VQA_type": "open", "answer": "liver"}  # fmt: skip
    path = tmp_path / "public.jsonl"
    path.write_text(json.dumps(row) + "\n")
    (item,) = items_of(f"mmbu:{path}")
    assert (item.id, item.kind, item.answer, item.options) == ("u-17", "open", "liver", {})
    assert item.meta["label_set"] == "liver, kidney, spleen"  # for the judge, never sent
    assert item.meta["modality"] == "CT" and item.meta["metadata_body_part"] == "abdomen"
    assert build_prompt(item, "mmbu") == "What organ is this?"


@pytest.mark.parametrize(
    ("header", "row", "name", "field"),
    [
        ("index\tquestion\timage_path\tdataset\tmodality\toptions",
         "1\tQ?\timages/classification/a.png\tISIC\tdermoscopy\tA. x B. y",
         "classification_closed_VQA.tsv", "class_label"),
        (HEADER, "1\tQ?\timages/classification/a.png\tISIC\tx\tdermoscopy\tA. x B. y",
         "my_task.tsv", "task"),
    ],
)  # fmt: skip
def test_a_file_missing_class_label_or_task_is_one_line(
    tmp_path: Path, header: str, row: str, name: str, field: str
) -> None:
    _image(tmp_path, "images/classification/a.png")
    path = tmp_path / name
    path.write_text(f"{header}\n{row}\n")
    result = invoke_run(f"mmbu:{path}", "oracle", tmp_path / "runs", "bad")
    assert result.exit_code == 2, result.output
    assert f"{path}, line 2, field '{field}'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_the_official_output_jsonl_replays(tmp_path: Path) -> None:
    root = inference_tsvs(tmp_path / "mmbu")
    tsv = root / "classification_closed_VQA.tsv"
    output = tmp_path / "classification_closed_VQA_output.jsonl"
    rows = [
        {"index": 1, "question": "What is shown?", "image_path": "images/classification/a.png",
         "dataset": "ISIC", "modality": "dermoscopy", "class_label": "melanoma", "answer": "B"},
        {"index": 2, "question": "What is shown?", "image_path": "images/classification/b.png",
         "dataset": "ISIC", "modality": "dermoscopy", "class_label": "nevus", "answer": "C"},
    ]  # fmt: skip
    output.write_text("".join(json.dumps(row) + "\n" for row in rows))
    run = named_run(f"mmbu:{tsv}", f"replay:{output}", tmp_path / "runs", "replayed")
    results = json.loads((run / "results.json").read_text())
    assert results["overall"]["score"] == pytest.approx(0.5)
    output.write_text(json.dumps({"index": 1, "question": "What is shown?"}) + "\n")
    bad = invoke_run(f"mmbu:{tsv}", f"replay:{output}", tmp_path / "runs", "bad")
    assert bad.exit_code == 2 and f"{output}, line 1, field 'answer'" in bad.output


def test_prompt_mmbu_pads_images_to_512_and_never_resizes(tmp_path: Path) -> None:
    seen: list[tuple[str, tuple[int, int]]] = []

    def reply(request: ChatRequest) -> str:
        data = base64.b64decode(request.image_urls[0].split(",", 1)[1])
        with Image.open(io.BytesIO(data)) as image:
            seen.append((request.text, image.size))
        return "B"

    root = inference_tsvs(tmp_path / "mmbu")
    with serve(ServerConfig(reply=reply)) as running:
        spec = f"openai:m?base_url={running.base_url}&max_retries=0"
        named_run(f"mmbu:{root / 'classification_closed_VQA.tsv'}", spec, tmp_path / "runs", "p",
                  "--prompt", "mmbu", "--no-cache")  # fmt: skip
    assert sorted(size for _, size in seen) == [(512, 512), (600, 700)]
    assert {text for text, _ in seen} == {
        "What is shown? Options: A. nevus B. melanoma C. keratosis"
    }


def test_prompt_mmbu_is_for_mmbu(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    path.write_text(json.dumps({"id": "1", "question": "q", "kind": "open", "answer": "a"}) + "\n")
    result = invoke_run(f"jsonl:{path}", "oracle", tmp_path / "runs", "x", "--prompt", "mmbu")
    assert result.exit_code == 2 and "--prompt mmbu" in result.output


def test_an_open_item_has_no_options_in_the_prompt() -> None:
    item = Item("o", "What is it?", "open", answer="x", meta={"options_text": "A. x B. y"})
    assert build_prompt(item, "mmbu") == "What is it?"
