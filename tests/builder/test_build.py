"""The benchmark builder library: pixels, overlays, regions, option shuffling, folders, ECG."""

from __future__ import annotations

import io
import json
import os
import random
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from scipy import ndimage

from medlens.builder.bundled import BundledFileMissing, bundled_file, read_dicom, read_skimage
from medlens.builder.ecg import LEADS, Ecg, heart_rate, qrs_polarity, r_peaks, render_ecg
from medlens.builder.folder import ITEMS_FILE, STALE_AFTER_S, read_folder, write_folder
from medlens.builder.images import (
    display_size,
    fit_image,
    fit_labels,
    png_bytes,
    to_rgb,
    window_to_uint8,
)
from medlens.builder.overlays import COLOURS, draw_box, draw_contour, draw_mask
from medlens.builder.questions import Draft, ask_choice, ask_multi, choose_options
from medlens.builder.regions import (
    Region,
    boxes_overlap,
    disc_mask,
    enclosing_box,
    largest_blobs,
    pure_windows,
    smooth_classes,
)
from medlens.builder.scene import Scene, label_boxes, make_pools, pick_boxes, scene_questions
from medlens.core.errors import InputError

# ---------------------------------------------------------------- pixels


@pytest.mark.parametrize(
    ("values", "low", "high", "expected"),
    [
        ([-1000.0, 40.0, 3000.0], -160.0, 240.0, [0, 128, 255]),
        ([0.0, 0.5, 1.0], 0.0, 1.0, [0, 128, 255]),
        ([5.0], 10.0, 20.0, [0]),
    ],
)
def test_window_to_uint8_maps_and_clips(
    values: list[float], low: float, high: float, expected: list[int]
) -> None:
    out = window_to_uint8(np.array(values), low, high)
    assert out.dtype == np.uint8
    assert out.tolist() == expected


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ((1411, 1411), (512, 512)),
        ((640, 480), (512, 384)),
        ((256, 1024), (128, 512)),
        ((484, 300), (484, 300)),
        ((128, 128), (256, 256)),
        ((102, 102), (306, 306)),
        ((320, 240), (320, 240)),
    ],
)
def test_display_size_caps_at_512_and_enlarges_tiny_images(
    size: tuple[int, int], expected: tuple[int, int]
) -> None:
    assert display_size(*size) == expected


def test_fit_image_enlarges_by_nearest_neighbour() -> None:
    tiny = Image.fromarray(np.array([[0, 255], [255, 0]] * 50, dtype=np.uint8)[:100, :2])
    grown = fit_image(tiny)
    assert set(np.unique(np.asarray(grown)).tolist()) == {0, 255}


def test_fit_labels_keeps_label_values_and_shape() -> None:
    labels = np.zeros((10, 20), dtype=np.int64)
    labels[:, 10:] = 3
    resized = fit_labels(labels, (40, 20))
    assert resized.shape == (20, 40)
    assert set(np.unique(resized).tolist()) == {0, 3}
    assert (resized[:, :20] == 0).all() and (resized[:, 20:] == 3).all()


def png_chunk_types(data: bytes) -> list[bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    types, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        types.append(data[offset + 4 : offset + 8])
        offset += 12 + length
    return types


def test_png_bytes_are_reproducible_and_carry_no_metadata() -> None:
    pixels = np.random.default_rng(0).integers(0, 255, (32, 48, 3), dtype=np.uint8)
    image = Image.fromarray(pixels)
    image.info.update({"dpi": (300, 300), "icc_profile": b"x" * 64, "comment": "hello"})
    first = png_bytes(image)
    assert first == png_bytes(Image.fromarray(pixels.copy()))
    assert set(png_chunk_types(first)) == {b"IHDR", b"IDAT", b"IEND"}
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(first))), pixels)


def test_to_rgb_makes_three_channels_from_grey() -> None:
    image = to_rgb(np.full((4, 5), 7, dtype=np.uint8))
    assert image.mode == "RGB" and image.size == (5, 4)
    assert np.asarray(image)[0, 0].tolist() == [7, 7, 7]


# ---------------------------------------------------------------- overlays


def grey_image(width: int = 64, height: int = 48) -> Image.Image:
    return Image.fromarray(np.full((height, width, 3), 100, dtype=np.uint8))


def test_draw_box_outlines_only_the_box_and_leaves_the_original_alone() -> None:
    base = grey_image()
    marked = np.asarray(draw_box(base, (10, 10, 30, 30), "red"))
    assert marked[10, 20].tolist() == list(COLOURS["red"])
    assert marked[29, 20].tolist() == list(COLOURS["red"])
    assert marked[20, 20].tolist() == [100, 100, 100]
    assert marked[40, 50].tolist() == [100, 100, 100]
    assert (np.asarray(base) == 100).all()


def test_draw_mask_tints_masked_pixels_only() -> None:
    mask = np.zeros((48, 64), dtype=bool)
    mask[5:15, 5:15] = True
    marked = np.asarray(draw_mask(grey_image(), mask, "green"))
    assert marked[10, 10, 1] > 100 and marked[10, 10, 0] < 100
    assert marked[30, 30].tolist() == [100, 100, 100]


def test_draw_contour_draws_on_the_edge_not_inside() -> None:
    mask = disc_mask((48, 64), (32, 24), (15, 15))
    marked = np.asarray(draw_contour(grey_image(), mask, "yellow"))
    changed = (marked != 100).any(axis=2)
    edge = ndimage.binary_dilation(mask) & ~ndimage.binary_erosion(mask)
    assert changed[edge].mean() > 0.5
    assert not changed[24, 32]
    assert not changed[2, 2]


# ---------------------------------------------------------------- regions


def test_pure_windows_are_pure_disjoint_and_reproducible() -> None:
    mask = np.zeros((100, 100), dtype=bool)
    mask[10:60, 20:90] = True
    mask[::7, ::5] = False
    windows = pure_windows(mask, 16, random.Random(1), 4)
    assert len(windows) == 4
    for left, top, right, bottom in windows:
        assert right - left == bottom - top == 16
        assert mask[top:bottom, left:right].mean() >= 0.9
    assert not any(boxes_overlap(a, b) for i, a in enumerate(windows) for b in windows[i + 1 :])
    assert windows == pure_windows(mask, 16, random.Random(1), 4)


def test_pure_windows_gives_nothing_when_no_window_is_pure_enough() -> None:
    stripes = np.zeros((50, 50), dtype=bool)
    stripes[:, ::2] = True
    assert pure_windows(stripes, 10, random.Random(0), 3) == []
    assert pure_windows(stripes, 80, random.Random(0), 3) == []


def test_boxes_overlap() -> None:
    assert boxes_overlap((0, 0, 10, 10), (5, 5, 15, 15))
    assert not boxes_overlap((0, 0, 10, 10), (10, 0, 20, 10))


def test_enclosing_box_grows_and_clips() -> None:
    mask = np.zeros((20, 20), dtype=bool)
    mask[0:10, 5:15] = True
    assert enclosing_box(mask, 0.2) == (3, 0, 17, 12)


def test_largest_blobs_are_ordered_by_area() -> None:
    mask = np.zeros((30, 30), dtype=bool)
    mask[0:2, 0:2] = True
    mask[10:20, 10:20] = True
    mask[25:29, 0:4] = True
    blobs = largest_blobs(mask, 2)
    assert [int(b.sum()) for b in blobs] == [100, 16]
    assert largest_blobs(mask, 5, min_area=10)[-1].sum() == 16
    assert largest_blobs(np.zeros((5, 5), dtype=bool), 3) == []


def test_disc_mask_area_is_that_of_the_ellipse() -> None:
    disc = disc_mask((200, 200), (100, 100), (40, 20))
    assert abs(int(disc.sum()) - np.pi * 40 * 20) < 0.02 * np.pi * 40 * 20


def test_smooth_classes_removes_speckle() -> None:
    labels = np.ones((40, 40), dtype=np.int64)
    labels[20, 20] = 2
    labels[:, 30:] = 2
    smoothed = smooth_classes(labels, 2, 3)
    assert smoothed[20, 20] == 1
    assert (smoothed[:, 33:] == 2).all()


# ---------------------------------------------------------------- options


def test_choose_options_holds_gold_and_distinct_distractors() -> None:
    rng = random.Random(3)
    options, answer = choose_options(["liver"], ["kidney", "spleen", "liver", "aorta"], rng, 4)
    assert list(options) == ["A", "B", "C", "D"]
    assert sorted(options.values()) == ["aorta", "kidney", "liver", "spleen"]
    assert options[answer] == "liver"


def test_choose_options_multi_answer_is_sorted_letters_of_every_gold() -> None:
    options, answer = choose_options(["a", "b"], ["c", "d", "e"], random.Random(5), 5)
    assert answer == "".join(sorted(answer))
    assert {options[letter] for letter in answer} == {"a", "b"}


def test_choose_options_refuses_when_distractors_run_out() -> None:
    with pytest.raises(ValueError, match="cannot make 5 options"):
        choose_options(["a"], ["b", "c", "a"], random.Random(0), 5)


def test_gold_letter_moves_with_the_seed() -> None:
    letters = {
        choose_options(["x"], ["p", "q", "r", "s"], random.Random(seed), 5)[1] for seed in range(40)
    }
    assert letters == {"A", "B", "C", "D", "E"}


def test_ask_constructors_fill_a_draft() -> None:
    picture = (grey_image(), "pic")
    single = ask_choice("q1", "Q?", "a", ["b", "c", "d"], picture, {"task": "t"}, random.Random(0))
    multi = ask_multi("q2", "Q?", ["a", "b"], ["c", "d"], picture, {}, random.Random(0))
    assert single.kind == "choice" and len(single.answer) == 1
    assert multi.kind == "multi_choice" and len(multi.answer) == 2
    assert single.meta == {"task": "t"} and single.image_name == "pic"


# ---------------------------------------------------------------- scenes


def two_tissue_scene() -> Scene:
    """Left half 'alpha', right half 'beta', and a small 'gamma' object."""
    shape = (128, 128)
    left = np.zeros(shape, dtype=bool)
    left[:, :64] = True
    gamma = disc_mask(shape, (96, 96), (8, 8))
    return Scene(
        image_id="toy",
        source="test",
        modality="CT",
        department="Radiology",
        body_region="phantom",
        image=grey_image(128, 128),
        regions=(
            Region("alpha", left),
            Region("beta", ~left & ~gamma),
            Region("gamma", gamma, "object"),
        ),
        findings=("alpha", "beta"),
        absent=("delta", "epsilon"),
        region_wrong=("knee", "hand", "heart"),
    )


def test_label_boxes_lie_inside_their_label() -> None:
    scene = two_tissue_scene()
    boxes = label_boxes(scene, "alpha", random.Random(0), 3)
    assert len(boxes) == 3
    assert all(box[2] <= 64 for box in boxes)
    (box,) = label_boxes(scene, "gamma", random.Random(0), 3)
    assert box[0] <= 88 and box[2] >= 104


def test_pick_boxes_marks_target_boxes_only() -> None:
    scene = two_tissue_scene()
    by_label = {label: label_boxes(scene, label, random.Random(1), 4) for label in scene.labels()}
    chosen = pick_boxes(by_label, "alpha", random.Random(2))
    assert chosen is not None and len(chosen) == 4
    for box, label in chosen:
        assert box in by_label[label]
    assert 1 <= sum(label == "alpha" for _, label in chosen) <= 3


def test_scene_questions_cover_every_granularity_with_correct_gold() -> None:
    scene = two_tissue_scene()
    other = Scene(
        "eye",
        "test",
        "Fundus Photography",
        "Eye",
        "retina",
        grey_image(),
        findings=("optic disc", "macula", "vessels", "fovea"),
        domain="eye",
    )
    pools = make_pools([scene, other], ["X-ray", "PET", "OCT"], {})
    drafts = scene_questions(scene, pools, random.Random(0))
    granularities = {d.meta["granularity"] for d in drafts}
    assert granularities == {"image", "box", "mask", "contour"}
    for draft in drafts:
        assert set(draft.answer) <= set(draft.options)
        assert len(set(draft.options.values())) == len(draft.options)
        if draft.id.endswith("-findings"):
            gold = {draft.options[letter] for letter in draft.answer}
            assert gold <= set(scene.findings)
            assert not (set(draft.options.values()) - gold) & set(scene.findings)
    assert [d.id for d in drafts] == [d.id for d in scene_questions(scene, pools, random.Random(0))]


# ---------------------------------------------------------------- folders


def toy_drafts(count: int, fail_after: int | None = None) -> Iterator[Draft]:
    """``count`` drafts over two pictures; raises before draft ``fail_after`` (a killed build)."""
    for index in range(count):
        if index == fail_after:
            raise RuntimeError("killed")
        yield ask_choice(
            f"q{index}",
            "Q?",
            "a",
            ["b", "c", "d"],
            (grey_image(), f"img{index % 2}"),
            {"granularity": "image"},
            random.Random(index),
        )


def test_write_folder_then_read_folder_round_trip(tmp_path: Path) -> None:
    target = write_folder(toy_drafts(3), tmp_path / "bench")
    assert sorted(p.name for p in (target / "images").iterdir()) == ["img0.png", "img1.png"]
    items = list(read_folder(target))
    assert [i.id for i in items] == ["q0", "q1", "q2"]
    assert Path(items[0].images[0].path) == target / "images" / "img0.png"
    line = json.loads((target / ITEMS_FILE).read_text().splitlines()[0])
    assert line["images"][0]["path"] == "images/img0.png"


def test_a_failed_build_leaves_nothing_behind(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="killed"):
        write_folder(toy_drafts(5, fail_after=3), tmp_path / "bench")
    assert list(tmp_path.iterdir()) == []


def test_a_build_that_loses_the_race_keeps_the_winner(tmp_path: Path) -> None:
    first = write_folder(toy_drafts(2), tmp_path / "bench")
    before = (first / ITEMS_FILE).read_bytes()
    again = write_folder(toy_drafts(2), tmp_path / "bench")
    assert again == first and (first / ITEMS_FILE).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]


def test_leftovers_of_killed_builds_are_cleared_but_running_ones_kept(tmp_path: Path) -> None:
    old = tmp_path / ".bench.building-old"
    running = tmp_path / ".bench.building-now"
    for folder in (old, running):
        (folder / "images").mkdir(parents=True)
    os.utime(old, (time.time() - 2 * STALE_AFTER_S,) * 2)
    write_folder(toy_drafts(1), tmp_path / "bench")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".bench.building-now", "bench"]


def test_read_folder_names_the_bad_line(tmp_path: Path) -> None:
    (tmp_path / ITEMS_FILE).write_text('{"id": "1"}\n', encoding="utf-8")
    with pytest.raises(InputError, match="line 1"):
        list(read_folder(tmp_path))


# ---------------------------------------------------------------- bundled files and ECG


def test_bundled_files_are_found_on_disk_and_absent_ones_refused() -> None:
    assert bundled_file("pydicom", "CT_small.dcm").is_file()
    assert bundled_file("skimage", "ihc.png").is_file()
    with pytest.raises(BundledFileMissing):
        bundled_file("pydicom", "emri_small.dcm")
    with pytest.raises(BundledFileMissing):
        bundled_file("skimage", "kidney.tif")


def test_bundled_readers_return_arrays() -> None:
    assert read_dicom("CT_small.dcm").Modality == "CT"
    assert read_skimage("microaneurysms.png").shape == (102, 102)
    assert read_skimage("retina.jpg").shape[2] == 3


def synthetic_ecg(beats_per_minute: float) -> Ecg:
    rate = 500.0
    times = np.arange(int(10 * rate)) / rate
    period = 60.0 / beats_per_minute
    spikes = np.exp(-(((times % period) - period / 2) ** 2) / (2 * 0.01**2)) * 1000.0
    signals = np.tile(spikes[:, None], (1, len(LEADS)))
    signals[:, LEADS.index("aVR")] *= -1
    return Ecg(signals=signals, rate=rate)


@pytest.mark.parametrize("bpm", [50.0, 75.0, 120.0])
def test_heart_rate_of_a_synthetic_trace(bpm: float) -> None:
    assert heart_rate(synthetic_ecg(bpm)) == pytest.approx(bpm, rel=0.02)


def test_qrs_polarity_finds_the_inverted_lead() -> None:
    ecg = synthetic_ecg(60.0)
    peaks = r_peaks(ecg)
    assert qrs_polarity(ecg, "aVR", peaks) == "negative"
    assert qrs_polarity(ecg, "V5", peaks) == "positive"


def test_render_ecg_places_twelve_panels_inside_the_image() -> None:
    image, panels = render_ecg(synthetic_ecg(60.0))
    assert image.size[0] <= 512 and set(panels) == set(LEADS)
    for left, top, right, bottom in panels.values():
        assert 0 <= left < right <= image.size[0] and 0 <= top < bottom <= image.size[1]
    assert (np.asarray(image) < 50).any()
