"""The embedded demo benchmark (`--bench demo`): content, cache, and byte-identical builds."""

from __future__ import annotations

import collections
import socket
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medlens.api import load_benchmark
from medlens.builder import demo_source
from medlens.builder.bundled import bundled_file, hounsfield_units, read_dicom
from medlens.builder.demo import DEMO_FOLDER, available_scenes
from medlens.builder.ecg import heart_rate, qrs_polarity, r_peaks, read_ecg
from medlens.builder.scene import Scene
from medlens.core.errors import InputError, SpecError
from medlens.core.items import GRANULARITIES, Item, decode_image

REQUIRED_META = ("task", "department", "modality", "granularity", "source", "image_id", "split")


@pytest.fixture(scope="module")
def demo_items(_session_data: Path) -> list[Item]:
    """The demo's items, built into the session's data dir (never the user's)."""
    # Module fixtures run before conftest's per-test environment, so set it here too.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEDLENS_DATA", str(_session_data))
        return list(load_benchmark("demo").items())


def test_demo_is_large_enough_and_covers_the_axes(demo_items: list[Item]) -> None:
    assert len(demo_items) >= 150
    modalities = {item.meta["modality"] for item in demo_items}
    assert len(modalities - {"Segmentation mask"}) >= 6
    assert {item.meta["granularity"] for item in demo_items} == set(GRANULARITIES)
    kinds = collections.Counter(item.kind for item in demo_items)
    assert set(kinds) == {"choice", "multi_choice"}
    assert kinds["multi_choice"] >= 15
    assert len({item.meta["task"] for item in demo_items}) >= 5
    assert len({item.meta["department"] for item in demo_items}) >= 6


def test_every_item_is_a_well_formed_question(demo_items: list[Item]) -> None:
    assert len({item.id for item in demo_items}) == len(demo_items)
    for item in demo_items:
        letters = list(item.options)
        assert letters == list("ABCDE"[: len(letters)]) and 4 <= len(letters) <= 5, item.id
        assert len(set(item.options.values())) == len(letters), item.id
        assert isinstance(item.answer, str) and item.answer, item.id
        assert set(item.answer) <= set(letters), item.id
        assert item.answer == "".join(sorted(set(item.answer))), item.id
        if item.kind == "choice":
            assert len(item.answer) == 1, item.id
        for key in REQUIRED_META:
            assert item.meta.get(key), (item.id, key)
        assert item.meta["split"] == "val"
        assert item.meta["granularity"] in GRANULARITIES


def test_several_questions_share_an_image_for_clustered_statistics(
    demo_items: list[Item],
) -> None:
    per_image = collections.Counter(item.meta["image_id"] for item in demo_items)
    assert len(per_image) >= 10
    assert sum(count >= 5 for count in per_image.values()) >= 8


def test_gold_letters_are_spread_over_positions(demo_items: list[Item]) -> None:
    letters = collections.Counter(item.answer for item in demo_items if item.kind == "choice")
    total = sum(letters.values())
    assert set(letters) == set("ABCDE")
    # The `prior` baseline (always the commonest letter) must stay near chance.
    assert max(letters.values()) / total < 0.3


def test_every_source_file_ships_inside_an_installed_package(demo_items: list[Item]) -> None:
    for source in {item.meta["source_file"] for item in demo_items}:
        package, _, name = source.partition("/")
        assert bundled_file(package, name).is_file()


def test_demo_tables_read_well(demo_items: list[Item]) -> None:
    """No 1-item modality; sources are named for a reader, not by test-file name."""
    from collections import Counter

    modalities = Counter(item.meta["modality"] for item in demo_items)
    assert min(modalities.values()) > 1, modalities
    for item in demo_items:
        assert ".dcm" not in item.meta["source"] and "(" in item.meta["source"]


def test_every_image_decodes_as_8_bit_rgb_within_512_pixels(demo_items: list[Item]) -> None:
    seen: set[str] = set()
    for item in demo_items:
        (ref,) = item.images
        assert Path(ref.path).is_absolute() and Path(ref.path).is_file()
        if ref.path in seen:
            continue
        seen.add(ref.path)
        image = decode_image(ref.read_bytes(), name=ref.name)
        assert image.mode == "RGB", ref.name
        assert max(image.size) <= 512, ref.name


def test_region_questions_show_a_marked_picture(demo_items: list[Item]) -> None:
    """Box, mask and contour items each get their own drawn picture; image items share one."""
    for item in demo_items:
        name = item.images[0].name
        if item.meta["granularity"] == "image":
            assert name == f"{item.meta['image_id']}.png", item.id
        elif item.meta["image_id"] != "liver_seg":
            assert name != f"{item.meta['image_id']}.png", item.id


def block_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any attempt to download fail loudly during a build."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the demo build tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    import pydicom.data

    monkeypatch.setattr(pydicom.data, "get_testdata_file", refuse)
    monkeypatch.setattr(pydicom.data, "get_testdata_files", refuse)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_fresh_offline_build_is_byte_identical_to_the_cached_one(
    demo_items: list[Item], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = demo_source.demo_dir()
    assert Path(demo_items[0].images[0].path).is_relative_to(cached)
    block_network(monkeypatch)
    fresh = demo_source.build_demo(tmp_path / DEMO_FOLDER)
    cached_files, fresh_files = folder_bytes(cached), folder_bytes(fresh)
    assert len(fresh_files) > 100
    assert sorted(cached_files) == sorted(fresh_files)
    different = [name for name in cached_files if cached_files[name] != fresh_files[name]]
    assert different == []


def test_the_cache_is_reused_not_rebuilt(
    demo_items: list[Item], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(folder: Path) -> Path:
        raise AssertionError(f"rebuilt {folder}")

    monkeypatch.setattr(demo_source, "build_demo", refuse)
    assert sum(1 for _ in load_benchmark("demo").items()) == len(demo_items)


def test_the_cache_lives_under_medlens_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[Path] = []

    def record(folder: Path) -> Path:
        built.append(folder)
        return folder

    monkeypatch.setenv("MEDLENS_DATA", str(tmp_path / "data"))
    monkeypatch.setattr(demo_source, "build_demo", record)
    demo_source.demo_dir()
    assert built == [tmp_path / "data" / DEMO_FOLDER]


def test_an_unwritable_data_dir_is_a_one_line_user_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be", encoding="utf-8")
    monkeypatch.setenv("MEDLENS_DATA", str(blocker))
    with pytest.raises(InputError, match="cannot build the demo benchmark"):
        load_benchmark("demo")


def test_default_data_dir_is_the_user_data_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("MEDLENS_DATA")
    assert demo_source.data_dir() == Path(platformdirs.user_data_dir("medlens"))


@pytest.mark.parametrize("spec", ["demo:extra", "demo?size=10"])
def test_demo_spec_takes_no_argument_or_option(spec: str) -> None:
    with pytest.raises(SpecError):
        load_benchmark(spec)


def test_benchmark_record_describes_the_demo() -> None:
    benchmark = load_benchmark("demo")
    assert (benchmark.name, benchmark.split, benchmark.has_answers) == ("demo", "val", True)
    assert benchmark.spec == "demo"
    first: Iterator[Item] = benchmark.items()
    assert next(first).meta["split"] == "val"


# ---------------------------------------------------------------- the pictures behind the items


@pytest.fixture(scope="module")
def scenes() -> dict[str, Scene]:
    return {scene.image_id: scene for scene in available_scenes()}


def test_every_bundled_picture_is_present(scenes: dict[str, Scene]) -> None:
    assert sorted(scenes) == [
        "cell_phase",
        "ct_head",
        "ct_thorax",
        "ecg_12lead",
        "fundus_microaneurysms",
        "fundus_retina",
        "ihc_colon",
        "mr_abdomen",
        "nm_bone_scan",
        "us_doppler",
        "us_echo_f00",
        "us_echo_f15",
    ]


def test_scenes_are_consistent(scenes: dict[str, Scene]) -> None:
    for scene in scenes.values():
        width, height = scene.image.size
        assert scene.image.mode == "RGB" and max(width, height) <= 512, scene.image_id
        for region in scene.regions:
            assert region.mask.shape == (height, width), (scene.image_id, region.label)
            assert region.mask.any(), (scene.image_id, region.label)
        labels = set(scene.labels())
        assert not labels & set(scene.absent), scene.image_id
        assert scene.body_region not in scene.region_wrong, scene.image_id


def test_ct_labels_follow_hounsfield_ranges(scenes: dict[str, Scene]) -> None:
    hu = hounsfield_units(read_dicom("J2K_pixelrep_mismatch.dcm"))
    scene = scenes["ct_head"]
    expected = {"bone": (200, None), "soft tissue": (-30, 130), "fat": (-220, 0)}
    for region in scene.regions:
        if region.label in expected:
            low, high = expected[region.label]
            median = float(np.median(hu[region.mask]))
            assert median >= low and (high is None or median <= high), region.label


def test_mr_lesion_is_the_radiologists_ring(scenes: dict[str, Scene]) -> None:
    (lesion,) = [r for r in scenes["mr_abdomen"].regions if r.label == "focal liver lesion"]
    rows, cols = lesion.mask.nonzero()
    assert 55 <= cols.mean() <= 70 and 148 <= rows.mean() <= 164
    assert 700 <= lesion.mask.sum() <= 1400


def test_bone_scan_bladder_is_the_hot_spot_mid_body(scenes: dict[str, Scene]) -> None:
    scene = scenes["nm_bone_scan"]
    (bladder,) = [r for r in scene.regions if r.label == "urinary bladder"]
    (body,) = [r for r in scene.regions if r.label.startswith("body")]
    grey = np.asarray(scene.image)[:, :, 0].astype(float)
    assert grey[bladder.mask].mean() > grey[body.mask].mean() + 60
    body_rows = body.mask.nonzero()[0]
    centre = bladder.mask.nonzero()[0].mean()
    assert (
        body_rows.min() + 0.3 * np.ptp(body_rows)
        < centre
        < body_rows.max() - 0.3 * np.ptp(body_rows)
    )


def test_doppler_flow_region_is_coloured_and_tissue_grey(scenes: dict[str, Scene]) -> None:
    scene = scenes["us_doppler"]
    pixels = np.asarray(scene.image).astype(int)
    colourfulness = pixels.max(axis=2) - pixels.min(axis=2)
    by_label = {r.label: r.mask for r in scene.regions}
    assert colourfulness[by_label["colour Doppler flow signal"]].mean() > 80
    assert colourfulness[by_label["greyscale tissue without flow signal"]].mean() < 20
    assert pixels[by_label["black background outside the scan area"]].mean() < 10


def test_ihc_brown_region_is_brown_and_stroma_is_not(scenes: dict[str, Scene]) -> None:
    scene = scenes["ihc_colon"]
    pixels = np.asarray(scene.image).astype(int)
    red_minus_blue = pixels[:, :, 0] - pixels[:, :, 2]
    by_label = {r.label: r.mask for r in scene.regions}
    brown = red_minus_blue[by_label["gland epithelium with brown DAB staining"]].mean()
    stroma = red_minus_blue[by_label["stroma with blue haematoxylin-stained nuclei"]].mean()
    assert brown > 40 > stroma


def test_fundus_landmarks_sit_on_bright_disc_and_dark_fovea(scenes: dict[str, Scene]) -> None:
    scene = scenes["fundus_retina"]
    grey = np.asarray(scene.image).astype(float).mean(axis=2)
    by_label = {r.label: r.mask for r in scene.regions}
    retina = grey[grey > 40].mean()
    assert grey[by_label["optic disc"]].mean() > retina + 30
    assert grey[by_label["fovea"]].mean() < retina
    assert grey[by_label["retinal blood vessels"]].mean() < retina


def test_microaneurysms_are_dark_spots(scenes: dict[str, Scene]) -> None:
    scene = scenes["fundus_microaneurysms"]
    grey = np.asarray(scene.image)[:, :, 0].astype(float)
    by_label = {r.label: r.mask for r in scene.regions}
    background = grey[by_label["retina without lesions or large vessels"]].mean()
    spots = [r.mask for r in scene.regions if r.label == "microaneurysm"]
    assert len(spots) == 2
    for spot in spots:
        assert grey[spot].min() < background - 25


def test_ecg_measurements_match_the_recording() -> None:
    ecg = read_ecg("waveform_ecg.dcm")
    assert heart_rate(ecg) == pytest.approx(61.0, abs=1.0)
    peaks = r_peaks(ecg)
    assert qrs_polarity(ecg, "aVR", peaks) == "negative"
    assert qrs_polarity(ecg, "II", peaks) == "positive"
