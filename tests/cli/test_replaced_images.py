"""Runs before and after an image was replaced are on different benchmarks: their content hashes
differ, and `compare`, `board` and a resumed `run` refuse to pair them (issue 49: two runs got
the same hash after the image files were replaced, and `compare` paired them without a word)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from gmai_fixture import write_gmai_tsv
from medlens.cli import app
from medlens.runs.store import spec_hash
from study_fixtures import write_shared_bench

LATER = 1_700_000_000


def content_hash(run: Path) -> str:
    return str(json.loads((run / "run.json").read_text())["spec"]["benchmark"]["content_hash"])


def flip_byte(path: Path, offset: int) -> None:
    """One byte changed in place: same size; a later modification time, as a copy has."""
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))
    os.utime(path, (LATER, LATER))


def refused_pairings(first: Path, second: Path) -> None:
    compared = CliRunner().invoke(app, ["compare", str(first), str(second)])
    assert compared.exit_code == 2
    assert "paired comparison needs the same items" in compared.output
    board = CliRunner().invoke(app, ["board", str(first), str(second)])
    assert board.exit_code == 2 and "a board needs the same benchmark" in board.output


def test_a_replaced_image_file_changes_the_hash_and_compare_refuses(tmp_path: Path) -> None:
    bench, _ = write_shared_bench(tmp_path / "b", 8, 4, shuffle=None)
    before = named_run(bench, "random?seed=1", tmp_path / "runs", "before")
    image = tmp_path / "b" / "img2.png"
    flip_byte(image, image.stat().st_size // 2)
    after = named_run(bench, "random?seed=1", tmp_path / "runs", "after")
    assert content_hash(before) != content_hash(after)
    refused_pairings(before, after)
    snapshot = (before / "records.jsonl").read_bytes()
    resumed = invoke_run(bench, "random?seed=1", tmp_path / "runs", "before")
    assert resumed.exit_code == 2 and "benchmark.content_hash" in resumed.output
    assert (before / "records.jsonl").read_bytes() == snapshot


def test_a_replaced_byte_of_a_tsv_image_changes_the_hash(tmp_path: Path) -> None:
    tsv = tmp_path / "val.tsv"
    write_gmai_tsv(tsv, n_rows=6)
    before = named_run(f"gmai:{tsv}", "random?seed=1", tmp_path / "runs", "before")
    text = tsv.read_bytes()
    header, first = text.split(b"\n")[:2]
    column = header.split(b"\t").index(b"image")
    cells = first.split(b"\t")
    start = len(header) + 1 + sum(len(c) + 1 for c in cells[:column]) + len(cells[column]) // 2
    letter = text[start : start + 1]  # a base64 letter in the middle of the first image
    replaced = text[:start] + (b"B" if letter != b"B" else b"C") + text[start + 1 :]
    tsv.write_bytes(replaced)
    os.utime(tsv, (LATER, LATER))
    after = named_run(f"gmai:{tsv}", "random?seed=1", tmp_path / "runs", "after")
    assert content_hash(before) != content_hash(after)
    refused_pairings(before, after)


def test_a_run_hashed_by_the_older_rule_is_named_as_such(tmp_path: Path) -> None:
    """A run.json written before issue 49 (no content_hash_version: images by name) cannot be
    paired with a new run, and the refusal says why instead of blaming the images."""
    bench, _ = write_shared_bench(tmp_path / "b", 6, 3, shuffle=None)
    old = named_run(bench, "random?seed=1", tmp_path / "runs", "old")
    new = named_run(bench, "random?seed=2", tmp_path / "runs", "new")
    run_file = old / "run.json"
    run = json.loads(run_file.read_text())
    del run["spec"]["benchmark"]["content_hash_version"]
    run["spec"]["benchmark"]["content_hash"] = "0" * 64  # what the name-only rule gave
    run["spec_hash"] = spec_hash(run["spec"])
    run_file.write_text(json.dumps(run))
    compared = CliRunner().invoke(app, ["compare", str(old), str(new)])
    assert compared.exit_code == 2
    assert "the older hash named images without reading them" in compared.output
    resumed = invoke_run(bench, "random?seed=1", tmp_path / "runs", "old")
    assert resumed.exit_code == 2 and "the older hash named images" in resumed.output
