"""M3D-VQA: 3D volumes shown as slices whose choice (slices, plane, window, order) is part of the
spec; .npy and NIfTI volumes; the published counts; bad input refused before anything is written."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import hfds_fixtures as hx
import multimodal_fixtures as fx
from cli_runs import invoke_run, named_run
from loopback_server import ChatRequest, ServerConfig, serve
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError
from medlens.core.fingerprint import describe
from medlens.core.items import ImageRef, Item
from medlens.core.volume_images import read_volume_slice

COMMIT = "e" * 40


def pixels(ref: ImageRef) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(ref.read_bytes())))


def items_of(spec: str) -> list[Item]:
    return list(load_benchmark(spec).items())


def test_test5k_holds_its_published_5000_questions(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path, 5000, volumes=40)
    closed = load_benchmark(f"m3d-vqa:{tmp_path}")
    items = list(closed.items())
    assert len(items) == 5000 and closed.split == "test5k"
    assert items[0].id == "test5k-0" and items[4999].id == "test5k-4999"
    assert {i.kind for i in items} == {"choice"}
    both = items_of(f"m3d-vqa:{tmp_path}?mode=all")
    assert len(both) == 10000 and both[1].id == "test5k-0:open" and both[1].kind == "open"
    assert both[1].answer == "choice A 0" and items[0].answer == "A"


def test_the_slicing_is_in_the_spec_the_meta_and_the_image_names(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path, 3)
    benchmark = load_benchmark(f"m3d-vqa:{tmp_path}")
    assert benchmark.spec.endswith("?order=ascending&pick=uniform&plane=stack&slices=5&window=auto")
    item = next(iter(benchmark.items()))
    assert item.meta["slices"] == "3,9,16,22,28"
    assert (item.meta["plane"], item.meta["window"], item.meta["slice_order"]) == (
        "stack", "auto", "ascending")  # fmt: skip
    assert item.images[0].name == "ct_case/000000/Axial_portal_venous.npy#stack[3]@auto"
    # slice k of the fixture volume is filled with k/31: the auto window maps [0, 1] to 0..255
    assert [int(pixels(r)[4, 4]) for r in item.images] == [
        round(k / 31 * 255) for k in (3, 9, 16, 22, 28)
    ]


@pytest.mark.parametrize(
    ("options", "slices"),
    [
        ("slices=3", "5,16,26"),
        ("slices=4&pick=middle", "14,15,16,17"),
        ("pick=0,31,8", "0,8,31"),
        ("slices=3&order=descending", "26,16,5"),
        ("slices=99", ",".join(map(str, range(32)))),
    ],
)
def test_slice_choices(tmp_path: Path, options: str, slices: str) -> None:
    fx.write_m3dvqa(tmp_path, 1)
    item = items_of(f"m3d-vqa:{tmp_path}?{options}")[0]
    assert item.meta["slices"] == slices
    assert [r.offset for r in item.images] == [int(s) for s in slices.split(",")]


def test_another_window_is_another_benchmark(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path, 4)
    auto = load_benchmark(f"m3d-vqa:{tmp_path}")
    narrow = load_benchmark(f"m3d-vqa:{tmp_path}?window=0.5,0.5")
    auto_items, narrow_items = list(auto.items()), list(narrow.items())
    assert describe(auto, auto_items).content_hash != describe(narrow, narrow_items).content_hash
    # level 0.5, width 0.5: [0.25, 0.75] → 0..255, clipped outside
    k = narrow_items[0].images[0].offset  # 3: 3/31 < 0.25 → black
    assert int(pixels(narrow_items[0].images[0])[4, 4]) == 0 and k == 3
    middle = narrow_items[0].images[2]  # slice 16: 16/31 = 0.516
    assert int(pixels(middle)[4, 4]) == round((16 / 31 - 0.25) / 0.5 * 255)


def test_each_slice_of_a_volume_has_its_own_digest(tmp_path: Path) -> None:
    """The digest cache (keyed by the volume file) tells its slices apart, cold and warm."""
    from medlens.core.image_digests import bytes_digest, digest_cache

    fx.write_m3dvqa(tmp_path, 1, volumes=1)
    volume = tmp_path / "ct_case" / "000000" / "Axial_portal_venous.npy"
    os.utime(volume, (1_600_000_000, 1_600_000_000))  # old enough for the cache to keep
    refs = items_of(f"m3d-vqa:{tmp_path}")[0].images
    wanted = [bytes_digest(r.read_bytes()) for r in refs]
    assert len(set(wanted)) == len(refs)
    for _ in range(2):
        with digest_cache() as cache:
            assert [cache.digest(r) for r in refs] == wanted


def test_nifti_volumes_are_read_in_their_anatomical_orientation(tmp_path: Path) -> None:
    """A volume stored left-right flipped (affine x negative) shows the same axial picture as the
    RAS+ one: medlens reorients to RAS+ and shows the patient's right on the image's left."""
    data = np.zeros((6, 5, 4), dtype=np.int16)
    data[0, 4, 2] = 1000  # x=0 (patient's right), y=4 (anterior), z=2
    fx.write_nifti(tmp_path / "vols" / "ras.nii.gz", data)
    flipped = np.diag([-1.0, 1.0, 1.0, 1.0])
    flipped[0, 3] = 5.0
    fx.write_nifti(tmp_path / "vols" / "las.nii", data[::-1], flipped)
    for name in ("ras.nii.gz", "las.nii"):
        image = read_volume_slice(str(tmp_path / "vols" / name), 2, "plane=axial;window=auto")
        picture = np.asarray(Image.open(io.BytesIO(image)))
        assert picture.shape == (5, 6)  # rows: y (anterior at the top), columns: x
        assert np.argwhere(picture == 255).tolist() == [[0, 0]]


def test_nifti_volume_in_a_benchmark_with_a_ct_window(tmp_path: Path) -> None:
    data = np.full((4, 4, 8), -1000, dtype=np.int16)
    data[:, :, 4] = 40
    fx.write_nifti(tmp_path / "ct" / "scan.nii.gz", data)
    csv = tmp_path / "M3D_VQA_test5k.csv"
    csv.write_text(",".join(fx.M3D_COLUMNS) + "\nct/scan.nii.gz,r,Organ,Which?,a,b,c,d,a,A\n")
    item = items_of(f"m3d-vqa:{tmp_path}?plane=axial&window=soft-tissue&pick=4,0")[0]
    assert [int(pixels(r).max()) for r in item.images] == [0, 128]  # air black; 40 HU mid-grey


def test_nifti_without_nibabel_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import medlens.core.extras as extras

    fx.write_nifti(tmp_path / "ct" / "scan.nii", np.zeros((2, 2, 2)))
    (tmp_path / "M3D_VQA_test5k.csv").write_text(
        ",".join(fx.M3D_COLUMNS) + "\nct/scan.nii,r,Organ,Which?,a,b,c,d,a,A\n"
    )
    real = extras._installed
    monkeypatch.setattr(extras, "_installed", lambda module: module != "nibabel" and real(module))
    result = invoke_run(f"m3d-vqa:{tmp_path}", "random", tmp_path / "runs", "r")
    assert result.exit_code == 2
    assert "pip install 'medlens[nifti]'" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()


def test_a_missing_volume_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path / "d", 6, volumes=3)
    (tmp_path / "d" / "ct_case" / "000002" / "Axial_portal_venous.npy").unlink()
    out = tmp_path / "runs"
    result = invoke_run(f"m3d-vqa:{tmp_path / 'd'}", "random", out, "r")
    assert result.exit_code == 2
    line = result.output.strip()
    assert len(line.splitlines()) == 1 and "M3D_VQA_test5k.csv" in line
    assert "line 4, field 'Image Path'" in line and "000002" in line
    assert not out.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("window=wide", "window='wide': expected auto, LEVEL,WIDTH"),
        ("window=40,-1", "the width must be positive"),
        ("plane=axial", "an .npy volume has no orientation; use plane=stack"),
        ("plane=oblique", "plane='oblique' is not one of stack, axial, coronal, sagittal"),
        ("pick=some", "pick='some' is not uniform, middle or a list"),
        ("slices=0", "slices must be at least 1"),
        ("order=random", "order='random' is not one of ascending, descending"),
    ],
)
def test_bad_slicing_options_are_one_line(tmp_path: Path, options: str, message: str) -> None:
    fx.write_m3dvqa(tmp_path, 1)
    with pytest.raises(SpecError, match=message.replace("(", "\\(").replace(".", "\\.")):
        items_of(f"m3d-vqa:{tmp_path}?{options}")


def test_a_slice_outside_the_volume_names_the_row(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path, 1)
    with pytest.raises(
        InputError, match="line 2, field 'Image Path': slice\\(s\\) \\[40\\] outside"
    ):
        items_of(f"m3d-vqa:{tmp_path}?pick=1,40")


def test_hub_copy_equals_the_release_and_keeps_the_slicing(tmp_path: Path, hub_cache: Path) -> None:
    release = fx.write_m3dvqa(tmp_path / "release", 8, images_root=tmp_path / "m3dcap")
    hx.snapshot_folder(hub_cache, "GoodBaiBai88/M3D-VQA", COMMIT, release)
    options = f"images={tmp_path / 'm3dcap'}&slices=3"
    native = load_benchmark(f"m3d-vqa:{release}?{options}")
    hub = load_benchmark(f"hfds:GoodBaiBai88/M3D-VQA?{options}")
    native_items, hub_items = list(native.items()), list(hub.items())
    assert describe(hub, hub_items).content_hash == describe(native, native_items).content_hash
    assert "&slices=3&" in hub.spec and "window=auto" in hub.spec
    assert hub.provenance["preset"] == "m3d-vqa"


def test_slices_reach_the_model_as_images_in_order(tmp_path: Path) -> None:
    fx.write_m3dvqa(tmp_path / "d", 2, volumes=1)
    seen: list[tuple[str, ...]] = []

    def reply(request: ChatRequest) -> str:
        seen.append(request.image_urls)
        return "A"

    with serve(ServerConfig(reply=reply)) as server:
        run = named_run(f"m3d-vqa:{tmp_path / 'd'}?slices=3&order=descending",
                        f"openai:m?base_url={server.base_url}", tmp_path / "runs", "r")  # fmt: skip
    assert len(seen) == 2 and all(len(urls) == 3 for urls in seen)
    import base64

    values = [
        int(np.asarray(Image.open(io.BytesIO(base64.b64decode(u.split(",", 1)[1]))))[4, 4])
        for u in seen[0]
    ]
    assert values == [round(k / 31 * 255) for k in (26, 16, 5)]
    assert "slices=3" in (run / "run.json").read_text()


def test_check_compares_test5k_with_its_card(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from medlens.cli import app

    fx.write_m3dvqa(tmp_path, 5000, volumes=20)
    for mode in ("closed", "all"):
        result = CliRunner().invoke(app, ["check", f"m3d-vqa:{tmp_path}?mode={mode}", "--json"])
        [line] = [c for c in json.loads(result.stdout)["checks"] if c["name"] == "published_counts"]
        assert line["status"] == "pass" and line["summary"] == "5,000 questions: as published"
