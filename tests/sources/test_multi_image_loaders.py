"""MMMU's medical subjects, MedFrameQA and ReXVQA: their releases and Hub layouts, published
counts, multi-image items in order, and a missing image refused before anything is written."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from PIL import Image

import hfds_fixtures as hx
import multimodal_fixtures as fx
from cli_runs import invoke_run, named_run
from loopback_server import ChatRequest, ServerConfig, serve
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError
from medlens.core.fingerprint import describe
from medlens.core.items import Item
from medlens.sources.mmmu import MEDICAL_SUBJECTS, PUBLISHED_COUNTS

COMMIT = "d" * 40


def loaded(spec: str) -> tuple[list[Item], str]:
    benchmark = load_benchmark(spec)
    items = list(benchmark.items())
    return items, describe(benchmark, items).content_hash


def refused_run(spec: str, tmp_path: Path, *fields: str) -> str:
    """`medlens run` on `spec` exits 2 with one line naming every text in `fields`, writing nothing."""
    out = tmp_path / "runs"
    result = invoke_run(spec, "random", out, "r")
    assert result.exit_code == 2, result.output
    line = result.output.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    for field in fields:
        assert field in line, line
    assert not out.exists()
    return line


# -- MMMU --------------------------------------------------------------------------------------
def test_mmmu_medical_subjects_hold_the_published_counts(tmp_path: Path) -> None:
    fx.write_mmmu(tmp_path, PUBLISHED_COUNTS)
    for split, per_subject in PUBLISHED_COUNTS.items():
        items = list(load_benchmark(f"mmmu:{tmp_path}?split={split}").items())
        by_subject = {s: sum(i.meta["subject"] == s for i in items) for s in MEDICAL_SUBJECTS}
        assert by_subject == per_subject
    assert sum(PUBLISHED_COUNTS["validation"].values()) == 150
    assert sum(PUBLISHED_COUNTS["test"].values()) == 1752
    test = load_benchmark(f"mmmu:{tmp_path}?split=test")
    assert not test.has_answers and {i.answer for i in test.items()} == {None}


def test_mmmu_rows_become_choice_and_open_items_with_images_in_tag_order(tmp_path: Path) -> None:
    fx.write_mmmu(tmp_path, {"validation": dict.fromkeys(MEDICAL_SUBJECTS, 10)})
    items = list(load_benchmark(f"mmmu:{tmp_path}?subjects=Clinical_Medicine").items())
    assert len(items) == 10 and {i.meta["department"] for i in items} == {"Clinical Medicine"}
    three = items[2]
    assert three.id == "validation_Clinical_Medicine_3" and three.kind == "choice"
    assert three.options == {"A": "finding 0 of 3", "B": "finding 1 of 3", "C": "finding 2 of 3",
                             "D": "finding 3 of 3"}  # fmt: skip
    assert three.answer == "D" and three.meta["task"] == "Radiology"
    assert [r.entry for r in three.images] == ["image_1", "image_2", "image_3"]
    assert [r.read_bytes() for r in three.images] == [fx.png(30 + k) for k in range(3)]
    assert "<image 3>" in three.question
    assert items[9].kind == "open" and items[9].answer == "7.5" and items[9].options == {}


def test_mmmu_through_its_hub_repo_equals_the_release_folder(
    tmp_path: Path, hub_cache: Path
) -> None:
    release = fx.write_mmmu(
        tmp_path / "release", {"validation": dict.fromkeys(MEDICAL_SUBJECTS, 4)}
    )
    hx.snapshot_folder(hub_cache, "MMMU/MMMU", COMMIT, release)
    native, native_hash = loaded(f"mmmu:{release}")
    hub_benchmark = load_benchmark("hfds:MMMU/MMMU")
    hub = list(hub_benchmark.items())
    assert [i.id for i in hub] == [i.id for i in native] and len(hub) == 20
    assert describe(hub_benchmark, hub).content_hash == native_hash
    assert hub_benchmark.provenance["preset"] == "mmmu"
    assert hub_benchmark.provenance["commit"] == COMMIT
    assert len(hub_benchmark.provenance["files"]) == 5


def test_mmmu_image_a_question_refers_to_but_missing_is_refused(tmp_path: Path) -> None:
    row = fx.mmmu_row("Pharmacy", "validation", 1, images=2)
    row["image_2"] = None
    fx.write_mmmu(tmp_path / "d", {"validation": {"Pharmacy": 1}},
                  rows={("Pharmacy", "validation"): [row]})  # fmt: skip
    line = refused_run(f"mmmu:{tmp_path / 'd'}?subjects=Pharmacy", tmp_path,
                       "validation-00000-of-00001.parquet", "row 0", "'image_2'", "<image 2>")  # fmt: skip
    assert "missing image" in line


def test_mmmu_empty_cell_before_a_filled_one_is_a_missing_image(tmp_path: Path) -> None:
    row = fx.mmmu_row("Pharmacy", "validation", 1, images=3)
    row["question"], row["image_2"] = "Compare the images.", None
    fx.write_mmmu(tmp_path / "d", {"validation": {"Pharmacy": 1}},
                  rows={("Pharmacy", "validation"): [row]})  # fmt: skip
    with pytest.raises(InputError, match="row 0, field 'image_2': empty, but 'image_3' holds"):
        list(load_benchmark(f"mmmu:{tmp_path / 'd'}?subjects=Pharmacy").items())


def test_mmmu_bad_subject_and_split_are_one_line(tmp_path: Path) -> None:
    fx.write_mmmu(tmp_path, {"validation": {"Pharmacy": 2}})
    with pytest.raises(
        InputError, match=r"no Basic_Medical_Science/validation-\*.parquet .*Pharmacy"
    ):
        load_benchmark(f"mmmu:{tmp_path}")
    with pytest.raises(SpecError, match="split='val' is not one of validation, dev, test"):
        load_benchmark(f"mmmu:{tmp_path}?split=val")


# -- MedFrameQA --------------------------------------------------------------------------------
def published_frames() -> list[int]:
    """2,851 questions, 2 to 5 frames each, 9,237 frames in all (the card's figures)."""
    counts = [5] * 1178 + [3] + [2] * 1672
    assert len(counts) == 2851 and sum(counts) == 9237
    return counts


def test_medframeqa_hub_parquet_holds_the_published_counts(tmp_path: Path) -> None:
    fx.write_medframeqa_hub(tmp_path, published_frames())
    items = list(load_benchmark(f"medframeqa:{tmp_path}").items())
    assert len(items) == 2851
    assert sum(len(i.images) for i in items) == 9237
    assert {len(i.images) for i in items} == {2, 3, 5}
    assert all(i.kind == "choice" and len(i.options) == 5 for i in items)


def test_medframeqa_release_json_and_hub_copy_agree(tmp_path: Path, hub_cache: Path) -> None:
    frames = [2, 3, 4, 5, 2, 3]
    fx.write_medframeqa_release(tmp_path / "release", frames)
    hub = fx.write_medframeqa_hub(tmp_path / "hub", frames)
    hx.snapshot_folder(hub_cache, "SuhaoYu1020/MedFrameQA", COMMIT, hub)
    release = list(load_benchmark(f"medframeqa:{tmp_path / 'release'}").items())
    from_hub = load_benchmark("hfds:SuhaoYu1020/MedFrameQA")
    table = list(from_hub.items())
    assert [(i.id, i.question, dict(i.options), i.answer) for i in table] == [
        (i.id, i.question, dict(i.options), i.answer) for i in release
    ]
    assert [[r.read_bytes() for r in i.images] for i in table] == [
        [r.read_bytes() for r in i.images] for i in release
    ]
    assert table[3].meta["body_system"] == "cardiovascular" and table[3].meta["image_id"] == "v0001"
    assert from_hub.provenance["preset"] == "medframeqa"


def test_medframeqa_frames_reach_the_model_in_their_order(tmp_path: Path) -> None:
    frames = [3, 5, 2]
    fx.write_medframeqa_hub(tmp_path / "d", frames)
    seen: list[tuple[str, tuple[str, ...]]] = []

    def reply(request: ChatRequest) -> str:
        seen.append((request.text, request.image_urls))
        return "A"

    with serve(ServerConfig(reply=reply)) as server:
        named_run(f"medframeqa:{tmp_path / 'd'}", f"openai:m?base_url={server.base_url}",
                  tmp_path / "runs", "order", "--concurrency", "1")  # fmt: skip
    by_question = {text.split("? (")[1][0]: urls for text, urls in seen}
    for number, count in enumerate(frames):
        urls = by_question[str(number)]
        assert len(urls) == count
        sent = [Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))) for u in urls]
        wanted = [Image.open(io.BytesIO(fx.png(number * 5 + k))) for k in range(count)]
        assert [s.tobytes() for s in sent] == [w.tobytes() for w in wanted]


def test_medframeqa_missing_frames_are_refused(tmp_path: Path) -> None:
    fx.write_medframeqa_hub(tmp_path / "gap", [3, 3], cells={1: [True, False, True, False, False]})
    refused_run(f"medframeqa:{tmp_path / 'gap'}", tmp_path, "test-00000-of-00001.parquet",
                "row 1, field 'image_2'", "missing image")  # fmt: skip
    fx.write_medframeqa_hub(tmp_path / "one", [2, 1])
    refused_run(f"medframeqa:{tmp_path / 'one'}", tmp_path, "row 1, field 'image_1'",
                "1 frame(s); MedFrameQA questions have 2 to 5")  # fmt: skip
    release = fx.write_medframeqa_release(tmp_path / "json", [2, 3])
    (release / "frames" / "v0000" / "1_2.png").unlink()
    refused_run(f"medframeqa:{release}", tmp_path, "MedFrameQA.json", "record 1",
                "field 'image_path[2]'", "not found")  # fmt: skip


# -- ReXVQA ------------------------------------------------------------------------------------
def test_rexvqa_questions_carry_every_image_of_their_study(tmp_path: Path) -> None:
    fx.write_rexvqa(tmp_path, [2, 1, 2, 2, 1, 2, 1, 2])
    benchmark = load_benchmark(f"rexvqa:{tmp_path}")
    items = list(benchmark.items())
    assert len(items) == 8 and benchmark.split == "test"
    first = items[0]
    assert first.options == {"A": "answer a", "B": "answer b", "C": "answer c", "D": "answer d"}
    assert first.answer == "A" and first.kind == "choice"
    assert [r.read_bytes() for r in first.images] == [fx.png(0), fx.png(1)]
    assert first.meta["task"] == "presence assessment"
    assert {i.meta["image_id"] for i in items[:4]} == {"pGRDN00000_aGRDN00000"}
    assert json.loads(first.meta["ImageViewPosition"]) == ["PA", "LATERAL"]


def test_rexvqa_images_elsewhere_and_through_the_hub(tmp_path: Path, hub_cache: Path) -> None:
    release = fx.write_rexvqa(tmp_path / "release", [2, 1, 2], split="valid",
                              images_root=tmp_path / "rexgradient")  # fmt: skip
    spec = f"rexvqa:{release}?split=valid&images={tmp_path / 'rexgradient'}"
    native, native_hash = loaded(spec)
    hx.snapshot_folder(hub_cache, "rajpurkarlab/ReXVQA", COMMIT, release)
    hub, hub_hash = loaded(
        f"hfds:rajpurkarlab/ReXVQA?split=valid&images={tmp_path / 'rexgradient'}"
    )
    assert [i.id for i in hub] == [i.id for i in native] and hub_hash == native_hash
    with pytest.raises(InputError, match="not found under"):
        list(load_benchmark(f"rexvqa:{release}?split=valid").items())


def test_rexvqa_missing_study_image_is_refused(tmp_path: Path) -> None:
    release = fx.write_rexvqa(tmp_path / "d", [1, 2])
    wanted = json.loads((release / "metadata" / "test_vqa_data.json").read_text())
    question_id, record = list(wanted.items())[1]
    (release / record["ImagePath"][1].removeprefix("../")).unlink()
    refused_run(f"rexvqa:{release}", tmp_path, "test_vqa_data.json", f"question {question_id!r}",
                "field 'ImagePath[1]'")  # fmt: skip


# -- `medlens check` against the published counts ----------------------------------------------
def published_line(spec: str) -> dict[str, object]:
    from typer.testing import CliRunner

    from medlens.cli import app

    result = CliRunner().invoke(app, ["check", spec, "--json"])
    report = json.loads(result.stdout)
    [line] = [c for c in report["checks"] if c["name"] == "published_counts"]
    return dict(line)


def test_check_compares_mmmu_and_medframeqa_with_their_cards(tmp_path: Path) -> None:
    fx.write_mmmu(tmp_path / "mmmu", {"validation": dict.fromkeys(MEDICAL_SUBJECTS, 30)})
    line = published_line(f"mmmu:{tmp_path / 'mmmu'}")
    assert line["status"] == "pass" and "Clinical_Medicine 30" in str(line["summary"])
    fx.write_mmmu(tmp_path / "short", {"validation": {"Pharmacy": 29}})
    line = published_line(f"mmmu:{tmp_path / 'short'}?subjects=Pharmacy")
    assert line["status"] == "warn" and "Pharmacy 29 (published 30)" in str(line["summary"])
    fx.write_medframeqa_hub(tmp_path / "frames", published_frames())
    line = published_line(f"medframeqa:{tmp_path / 'frames'}")
    assert line["status"] == "pass" and line["data"] == {
        "found": {"questions": 2851, "frames": 9237},
        "published": {"questions": 2851, "frames": 9237},
    }
