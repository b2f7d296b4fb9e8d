"""``hfds:``: Hugging Face datasets from the Hub cache, cloned repos and save_to_disk folders,
built from the real data sets with pyarrow and checked against the native loaders."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

import hfds_fixtures as fx
from cli_runs import invoke_run, named_run
from data_paths import realdata_dir
from medlens.api import load_benchmark
from medlens.core.errors import InputError, SpecError
from medlens.core.fingerprint import describe
from medlens.core.items import Item

COMMIT_A = "a" * 40
COMMIT_B = "b" * 40


def hashed(spec: str) -> tuple[list[Item], str]:
    benchmark = load_benchmark(spec)
    items = list(benchmark.items())
    return items, describe(benchmark, items).content_hash


def same_images(a: list[Item], b: list[Item]) -> None:
    for left, right in zip(a, b, strict=True):
        assert [i.read_bytes() for i in left.images] == [i.read_bytes() for i in right.images]


def test_cloned_repo_with_native_fields_equals_the_native_loader(tmp_path: Path) -> None:
    root = realdata_dir("vqa_rad")
    fx.write_repo(
        tmp_path / "repo",
        {"test": fx.vqarad_table(root), "train": fx.vqarad_table(root, split="train")},
    )
    native, native_hash = hashed(f"vqa-rad:{root}")
    hub, hub_hash = hashed(f"hfds:{tmp_path / 'repo'}?preset=vqa-rad")
    assert len(hub) == 451
    assert [i.id for i in hub] == [i.id for i in native]
    assert hub_hash == native_hash
    same_images(native, hub)
    assert Counter(i.kind for i in hub) == Counter(i.kind for i in native)


def test_hub_layout_without_native_fields_keeps_items_but_not_ids(hub_cache: Path) -> None:
    root = realdata_dir("pathvqa")
    fx.write_snapshot(hub_cache, "flaviagiammarino/path-vqa", COMMIT_A,
                      {"test": fx.pathvqa_table(root, native_fields=False, limit=300)})  # fmt: skip
    native = list(load_benchmark(f"pathvqa:{root}").items())[:300]
    hub, hub_hash = hashed("hfds:flaviagiammarino/path-vqa")
    assert [i.id for i in hub] == [str(n) for n in range(300)]
    assert [(i.question, i.kind, i.answer) for i in hub] == [
        (i.question, i.kind, i.answer) for i in native
    ]
    assert {i.meta["modality"] for i in hub} == {"pathology"}
    assert hub[0].meta["convert_rgb"] == "1"
    same_images(native, hub)
    assert hub_hash != describe(load_benchmark(f"pathvqa:{root}"), native).content_hash


def test_pathvqa_table_with_native_fields_equals_the_native_loader(tmp_path: Path) -> None:
    root = realdata_dir("pathvqa")
    fx.write_repo(tmp_path / "repo", {"test": fx.pathvqa_table(root)}, row_group_size=500)
    native, native_hash = hashed(f"pathvqa:{root}")
    hub, hub_hash = hashed(f"hfds:{tmp_path / 'repo'}?preset=pathvqa")
    assert len(hub) == 5564
    assert hub_hash == native_hash
    same_images(native[::97], hub[::97])


def test_repo_id_resolves_offline_at_two_revisions(hub_cache: Path) -> None:
    root = realdata_dir("vqa_rad")
    full = fx.vqarad_table(root)
    fx.write_snapshot(hub_cache, "flaviagiammarino/vqa-rad", COMMIT_A, {"test": full})
    fx.write_snapshot(hub_cache, "flaviagiammarino/vqa-rad", COMMIT_B, {"test": full.slice(0, 40)},
                      branch="v2")  # fmt: skip
    main = load_benchmark("hfds:flaviagiammarino/vqa-rad")
    assert len(list(main.items())) == 451
    assert main.provenance["commit"] == COMMIT_A
    assert main.provenance["repo"] == "flaviagiammarino/vqa-rad"
    assert main.provenance["files"] == [{"path": "data/test-00000-of-00001.parquet",
        "bytes": (hub_cache / "datasets--flaviagiammarino--vqa-rad/snapshots" / COMMIT_A / "data/test-00000-of-00001.parquet").stat().st_size}]  # fmt: skip
    for revision in ("v2", COMMIT_B):
        older = load_benchmark(f"hfds:flaviagiammarino/vqa-rad?revision={revision}")
        assert len(list(older.items())) == 40
        assert older.provenance["commit"] == COMMIT_B


def test_save_to_disk_folder_reads_arrow_lazily(tmp_path: Path) -> None:
    root = realdata_dir("vqa_rad")
    fx.write_saved(
        tmp_path / "saved",
        {"train": fx.vqarad_table(root, split="train"), "test": fx.vqarad_table(root)},
    )
    native, native_hash = hashed(f"vqa-rad:{root}")
    saved, saved_hash = hashed(f"hfds:{tmp_path / 'saved'}?preset=vqa-rad")
    assert saved_hash == native_hash
    assert saved[0].images[0].source == "arrow"
    same_images(native, saved)
    train = list(load_benchmark(f"hfds:{tmp_path / 'saved'}?preset=vqa-rad&split=train").items())
    assert len(train) == 3064


def test_one_split_save_to_disk_and_generic_roles(tmp_path: Path) -> None:
    table = pa.table(
        {
            "uid": ["q1", "q2", "q3"],
            "Query": ["Which organ?", "Is it normal?", "Which two?"],
            "choices": [["liver", "spleen"], None, ["a", "b", "c"]],
            "gold": ["spleen", "Yes", "A, C"],
            "site": ["x", "y", "z"],
        }
    )
    saved = fx.write_saved(tmp_path / "s", {"test": table})
    spec = f"hfds:{saved / 'test'}?question=Query&answer=gold&options=choices&id=uid"
    items = list(load_benchmark(spec).items())
    assert [(i.id, i.kind, i.answer) for i in items] == [
        ("q1", "choice", "B"),
        ("q2", "yes_no", "yes"),
        ("q3", "multi_choice", "AC"),
    ]
    assert items[0].meta["site"] == "x" and items[0].meta["split"] == "test"
    assert items[0].images == ()


def test_native_preset_on_a_symlinked_hub_snapshot_equals_slake(hub_cache: Path) -> None:
    """SLAKE's Hub repo holds the release files; the snapshot is symlinks into blobs/."""
    root = realdata_dir("slake")
    repo = hub_cache / "datasets--BoKelvin--SLAKE"
    snapshot = repo / "snapshots" / COMMIT_A
    test = json.loads((root / "test.json").read_text(encoding="utf-8"))
    wanted = {"test.json"} | {f"imgs/{r['img_name']}" for r in test}
    wanted |= {f"imgs/{Path(r['img_name']).parent}/detection.json" for r in test}
    for number, relative in enumerate(sorted(wanted)):
        blob = repo / "blobs" / f"{number:064x}"
        blob.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / relative, blob)
        link = snapshot / relative
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(blob)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT_A)
    native, native_hash = hashed(f"slake:{root}")
    hub, hub_hash = hashed("hfds:BoKelvin/SLAKE")
    assert len(hub) == 1061 and hub_hash == native_hash
    same_images(native[::50], hub[::50])
    benchmark = load_benchmark("hfds:BoKelvin/SLAKE?lang=zh")
    assert {i.meta["lang"] for i in benchmark.items()} == {"zh"}
    assert benchmark.provenance["preset"] == "slake"
    assert {f["path"] for f in benchmark.provenance["files"]} == {"test.json"}


def test_a_link_out_of_the_snapshot_repo_is_refused(hub_cache: Path) -> None:
    """Links into the repo's blobs/ are followed; a link elsewhere on the machine is not."""
    root = realdata_dir("slake")
    snapshot = hub_cache / "datasets--BoKelvin--SLAKE" / "snapshots" / COMMIT_A
    snapshot.mkdir(parents=True)
    shutil.copyfile(root / "test.json", snapshot / "test.json")
    first = json.loads((root / "test.json").read_text(encoding="utf-8"))[0]["img_name"]
    link = snapshot / "imgs" / first
    link.parent.mkdir(parents=True)
    link.symlink_to(root / "imgs" / first)
    with pytest.raises(InputError, match="resolves outside"):
        list(load_benchmark(f"hfds:BoKelvin/SLAKE?revision={COMMIT_A}").items())


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("hfds:someone/missing", "not in the Hugging Face cache"),
        (
            "hfds:flaviagiammarino/vqa-rad?revision=v9",
            "cached but not at revision 'v9' (cached: main",
        ),
        (
            "hfds:flaviagiammarino/vqa-rad?split=dev",
            "no split 'dev' in config 'default' (known splits: test)",
        ),
        (
            "hfds:flaviagiammarino/vqa-rad?question=prompt",
            "?question=prompt: no such column (columns: image, question, answer",
        ),
        ("hfds:flaviagiammarino/vqa-rad?preset=nope", "preset='nope' is not one of"),
    ],
)
def test_bad_input_is_one_line(hub_cache: Path, spec: str, message: str) -> None:
    fx.write_snapshot(hub_cache, "flaviagiammarino/vqa-rad", COMMIT_A,
                      {"test": fx.vqarad_table(realdata_dir("vqa_rad"), native_fields=False).slice(0, 5)})  # fmt: skip
    with pytest.raises((InputError, SpecError), match=_escape(message)):
        load_benchmark(spec)


def _escape(text: str) -> str:
    import re

    return re.escape(text)


def test_a_table_without_a_question_column_names_what_was_searched(tmp_path: Path) -> None:
    fx.write_repo(tmp_path / "r", {"test": pa.table({"prompt_text": ["a"], "answer": ["b"]})})
    with pytest.raises(SpecError) as caught:
        load_benchmark(f"hfds:{tmp_path / 'r'}")
    assert "no question column (searched question, query" in str(caught.value)
    assert "columns: prompt_text, answer" in str(caught.value)


def test_run_from_the_cli_records_provenance_and_oracle_scores_1(
    hub_cache: Path, tmp_path: Path
) -> None:
    fx.write_snapshot(hub_cache, "flaviagiammarino/vqa-rad", COMMIT_A,
                      {"test": fx.vqarad_table(realdata_dir("vqa_rad"), native_fields=False)})  # fmt: skip
    run = named_run("hfds:flaviagiammarino/vqa-rad", "oracle", tmp_path / "runs", "r")
    results: dict[str, Any] = json.loads((run / "results.json").read_text())
    assert results["overall"]["n"] == 451 and results["overall"]["score"] == 1.0
    source = json.loads((run / "run.json").read_text())["benchmark_source"]
    assert source["repo"] == "flaviagiammarino/vqa-rad" and source["commit"] == COMMIT_A
    assert source["files"][0]["bytes"] > 0


def test_refused_hfds_run_leaves_no_run_folder(hub_cache: Path, tmp_path: Path) -> None:
    result = invoke_run("hfds:someone/missing", "oracle", tmp_path / "runs", "r")
    assert result.exit_code == 2
    assert "not in the Hugging Face cache" in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_native_run_resumes_from_the_hub_copy(tmp_path: Path) -> None:
    root = realdata_dir("vqa_rad")
    fx.write_repo(tmp_path / "repo", {"test": fx.vqarad_table(root)})
    out = tmp_path / "runs"
    named_run(f"vqa-rad:{root}", "oracle", out, "r", "--limit", "20")
    run = named_run(f"hfds:{tmp_path / 'repo'}?preset=vqa-rad", "oracle", out, "r")
    lines = (run / "records.jsonl").read_text().splitlines()
    assert len(lines) == 451
    assert json.loads((run / "run.json").read_text())["spec"]["benchmark"]["name"] == "vqa-rad"


def test_benchmarks_lists_hfds_and_its_presets() -> None:
    from medlens.cli import app

    result = CliRunner().invoke(app, ["benchmarks"])
    assert result.exit_code == 0
    assert "hfds" in result.output
    listing = json.loads(CliRunner().invoke(app, ["benchmarks", "--json"]).stdout)
    hfds = next(row for row in listing if row["name"] == "hfds")
    presets = {p["name"]: p for p in hfds["presets"]}
    assert {
        "vqa-rad",
        "pathvqa",
        "slake",
        "pmc-vqa",
        "omnimedvqa",
        "medxpertqa",
        "mmbu",
        "gmai",
    } <= set(presets)
    assert "hash differs" in presets["vqa-rad"]["parity"]


def test_gmai_preset_reads_the_tsv_in_the_hub_repo(hub_cache: Path, tmp_path: Path) -> None:
    from gmai_fixture import write_gmai_tsv

    snapshot = hub_cache / "datasets--OpenGVLab--GMAI-MMBench" / "snapshots" / COMMIT_A
    snapshot.mkdir(parents=True)
    write_gmai_tsv(snapshot / "GMAI_mm_bench_VAL.tsv", n_rows=12)
    native, native_hash = hashed(f"gmai:{snapshot / 'GMAI_mm_bench_VAL.tsv'}")
    hub, hub_hash = hashed(f"hfds:OpenGVLab/GMAI-MMBench?revision={COMMIT_A}")
    assert len(hub) == 12 and hub_hash == native_hash
    same_images(native, hub)
    with pytest.raises(InputError, match="no GMAI-MMBench TEST TSV"):
        load_benchmark(f"hfds:OpenGVLab/GMAI-MMBench?revision={COMMIT_A}&split=test")


def _medlens(args: list[str], env: dict[str, str]) -> Any:
    import os
    import subprocess
    import sys

    full = {**os.environ, **env, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "medlens", *args], capture_output=True, text=True,
                          env=full, timeout=120, check=False)  # fmt: skip


def _hub_files() -> dict[str, bytes]:
    import io

    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(
        fx.vqarad_table(realdata_dir("vqa_rad"), native_fields=False).slice(0, 12), buffer
    )
    card = b"---\nconfigs:\n- config_name: default\n  data_files:\n  - split: test\n    path: data/test.parquet\n---\n"
    return {"README.md": card, "data/test.parquet": buffer.getvalue()}


def test_fetch_downloads_from_a_loopback_hub_verifies_and_then_reads_offline(
    tmp_path: Path,
) -> None:
    from hub_server import COMMIT, serve_hub

    cache = tmp_path / "cache"
    with serve_hub(_hub_files()) as endpoint:
        env = {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "0"}
        assert _medlens(["run", "--bench", "hfds:o/n", "--model", "oracle", "--out", str(tmp_path / "runs")],
                        env).returncode == 2  # nothing downloads unless asked  # fmt: skip
        fetched = _medlens(["fetch", "o/n"], env)
    assert fetched.returncode == 0, fetched.stderr
    provenance = json.loads(fetched.stdout)
    assert provenance["commit"] == COMMIT and provenance["verified_files"] == 2
    offline = {"HF_HUB_CACHE": str(cache), "HF_HUB_OFFLINE": "1"}
    run = _medlens(["run", "--bench", "hfds:o/n", "--model", "oracle", "--out", str(tmp_path / "runs"),
                    "--name", "r"], offline)  # fmt: skip
    assert run.returncode == 0, run.stderr
    source = json.loads((tmp_path / "runs" / "r" / "run.json").read_text())["benchmark_source"]
    assert source["commit"] == COMMIT and source["repo"] == "o/n"


def test_a_file_that_does_not_match_the_hubs_etag_is_refused(tmp_path: Path) -> None:
    from hub_server import serve_hub

    with serve_hub(_hub_files(), bad_etag="data/test.parquet") as endpoint:
        env = {"HF_ENDPOINT": endpoint, "HF_HUB_CACHE": str(tmp_path / "c"), "HF_HUB_OFFLINE": "0"}
        result = _medlens(["run", "--bench", "hfds:o/n?download=1", "--model", "oracle",
                           "--out", str(tmp_path / "runs")], env)  # fmt: skip
    assert result.returncode == 2
    assert "sha256" in result.stderr or "download failed" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_slake_hub_copy_with_zipped_images_equals_the_unpacked_release(hub_cache: Path) -> None:
    """BoKelvin/SLAKE ships imgs.zip; images are read from the zip, items equal slake:DIR's."""
    import zipfile

    root = realdata_dir("slake")
    snapshot = hub_cache / "datasets--BoKelvin--SLAKE" / "snapshots" / COMMIT_A
    snapshot.mkdir(parents=True)
    shutil.copyfile(root / "test.json", snapshot / "test.json")
    test = json.loads((root / "test.json").read_text(encoding="utf-8"))
    folders = sorted({Path(r["img_name"]).parent.as_posix() for r in test})
    with zipfile.ZipFile(snapshot / "imgs.zip", "w") as archive:
        for folder in folders:
            for name in ("source.jpg", "detection.json"):
                archive.write(root / "imgs" / folder / name, f"imgs/{folder}/{name}")
    native, native_hash = hashed(f"slake:{root}")
    hub, hub_hash = hashed(f"hfds:BoKelvin/SLAKE?revision={COMMIT_A}")
    assert len(hub) == 1061 and hub_hash == native_hash
    assert hub[0].images[0].source == "zip"
    same_images(native[::40], hub[::40])


def _pmcvqa_release(folder: Path, zipped: bool) -> list[dict[str, str]]:
    """A PMC-VQA-format release (the Hub's CSV columns) over real VQA-RAD images."""
    import csv
    import zipfile

    root = realdata_dir("vqa_rad")
    names = sorted(p.name for p in (root / "VQA_RAD Image Folder").glob("*.jpg"))[:6]
    choices = ["Diffuse uptake", "Focal uptake", "No uptake", "Cannot determine"]
    rows = []
    for number, name in enumerate(names):
        label = "ABCD"[number % 4]
        rows.append({"Figure_path": name, "Question": f"What pattern is seen ({number})?",
                     "Answer": choices[number % 4], **{f"Choice {k}": f"{k}:{choices[i]}" for i, k in enumerate("ABCD")},
                     "Answer_label": label, "split": "test"})  # fmt: skip
    folder.mkdir(parents=True)
    with open(folder / "test_clean.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    if zipped:
        with zipfile.ZipFile(folder / "images.zip", "w") as archive:
            for name in names:
                archive.write(root / "VQA_RAD Image Folder" / name, f"images/{name}")
    else:
        (folder / "images").mkdir()
        for name in names:
            shutil.copyfile(root / "VQA_RAD Image Folder" / name, folder / "images" / name)
    return rows


def test_pmcvqa_hub_copy_with_zipped_images_equals_the_unpacked_release(
    hub_cache: Path, tmp_path: Path
) -> None:
    snapshot = hub_cache / "datasets--xmcmic--PMC-VQA" / "snapshots" / COMMIT_A
    rows = _pmcvqa_release(snapshot, zipped=True)
    _pmcvqa_release(tmp_path / "unpacked", zipped=False)
    native, native_hash = hashed(f"pmc-vqa:{tmp_path / 'unpacked'}")
    hub, hub_hash = hashed(f"hfds:xmcmic/PMC-VQA?revision={COMMIT_A}")
    assert hub_hash == native_hash and len(hub) == 6
    assert [i.answer for i in hub] == [r["Answer_label"] for r in rows]
    assert hub[0].options == {
        "A": "Diffuse uptake",
        "B": "Focal uptake",
        "C": "No uptake",
        "D": "Cannot determine",
    }
    assert {i.kind for i in hub} == {"choice"} and hub[0].images[0].source == "zip"
    same_images(native, hub)


def test_unpack_writes_table_images_with_their_own_suffix(tmp_path: Path) -> None:
    from medlens.cli import app

    table = fx.vqarad_table(realdata_dir("vqa_rad")).slice(0, 5)
    fx.write_repo(tmp_path / "repo", {"test": table})
    result = CliRunner().invoke(
        app, ["unpack", f"hfds:{tmp_path / 'repo'}", "--output", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    written = sorted(p.suffix for p in (tmp_path / "out" / "images").iterdir())
    assert written and set(written) == {".jpg"}
    items = list(load_benchmark(f"jsonl:{tmp_path / 'out' / 'items.jsonl'}").items())
    source = list(load_benchmark(f"hfds:{tmp_path / 'repo'}").items())
    same_images(source, items)


def test_a_native_preset_option_on_a_table_is_refused(tmp_path: Path) -> None:
    fx.write_repo(tmp_path / "r", {"test": pa.table({"question": ["q"], "answer": ["yes"]})})
    with pytest.raises(SpecError, match="option\\(s\\) lang are for native presets"):
        load_benchmark(f"hfds:{tmp_path / 'r'}?lang=zh")
