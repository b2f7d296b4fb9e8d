"""The stamp of a run's derived files is taken while other judge stages of the run still write
(a study judges them side by side; each derives the results when it ends): a file under
``judges/`` that is there when listed and gone when hashed is no input and no error.

CI failed on this once: stage rubric listed ``judges/eq/.judge.json.XXXXXXXX``, the temporary of
stage eq's atomic rewrite of its judge.json, which was renamed away before rubric stat'ed it
(``FileNotFoundError``: the study stopped, exit 4). The interleaving is forced here with events.
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest

import medlens.runs.artifacts as artifacts
import medlens.runs.files as files
from medlens.runs.artifacts import Variant, basis_of, file_sha256
from medlens.runs.judgements import write_judge_json

WAIT_S = 60.0
"""How long an event is awaited: only reached if the interleaving was not the one forced."""


def judged_run(tmp_path: Path, stages: tuple[str, ...]) -> Path:
    run = tmp_path / "m--a"
    run.mkdir()
    for name in ("run.json", "items.jsonl", "records.jsonl"):
        (run / name).write_text("{}\n", encoding="utf-8")
    for stage in stages:
        write_judge_json(run / "judges" / stage, {"name": stage, "protocol": {}})
        (run / "judges" / stage / "judgements.jsonl").write_text('{"id":"q0"}\n', encoding="utf-8")
    return run


def on_first_hash(monkeypatch: pytest.MonkeyPatch, action: Any) -> None:
    """Do `action` when the stamp hashes its first file: after it listed the run's files."""
    real, done = artifacts.file_sha256, threading.Event()

    def hashing(path: Path) -> str:
        if not done.is_set():
            done.set()
            action()
        return real(path)

    monkeypatch.setattr(artifacts, "file_sha256", hashing)


def test_a_judge_json_being_rewritten_by_another_stage_is_not_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = judged_run(tmp_path, ("eq", "rubric"))
    created, release = threading.Event(), threading.Event()
    real_temporary = files._new_temporary

    def paused_temporary(path: Path) -> tuple[int, Path]:  # made, not yet renamed over path
        made = real_temporary(path)
        created.set()
        assert release.wait(WAIT_S)
        return made

    monkeypatch.setattr(files, "_new_temporary", paused_temporary)
    new_spec = {"name": "eq", "protocol": {}, "judge_fingerprint": {"served_models": {"j": 16}}}
    writer = threading.Thread(target=write_judge_json, args=(run / "judges" / "eq", new_spec))
    writer.start()
    try:
        assert created.wait(WAIT_S)
        assert [p.name for p in (run / "judges" / "eq").iterdir() if p.name.startswith(".")]

        def finish_the_write() -> None:  # eq's rename lands between the listing and the stat
            release.set()
            writer.join(WAIT_S)

        on_first_hash(monkeypatch, finish_the_write)
        basis = basis_of(run, Variant("medlens"))
    finally:
        release.set()
        writer.join(WAIT_S)
    assert not writer.is_alive()
    assert sorted(basis.files) == [
        "items.jsonl", "judges/eq/judge.json", "judges/eq/judgements.jsonl",
        "judges/rubric/judge.json", "judges/rubric/judgements.jsonl", "records.jsonl", "run.json",
    ]  # fmt: skip
    judge_json = run / "judges" / "eq" / "judge.json"
    assert json.loads(judge_json.read_text(encoding="utf-8")) == new_spec
    assert basis.files["judges/eq/judge.json"] == file_sha256(judge_json)


def test_a_stage_folder_removed_while_the_stamp_is_taken_is_not_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused stage removes its new folder (``judges.stage._remove_unjudged``) while
    another stage of the run derives the results."""
    run = judged_run(tmp_path, ("eq", "eq2"))
    on_first_hash(monkeypatch, lambda: shutil.rmtree(run / "judges" / "eq2"))
    basis = basis_of(run, Variant("medlens"))
    assert sorted(name for name in basis.files if name.startswith("judges/")) == [
        "judges/eq/judge.json", "judges/eq/judgements.jsonl",
    ]  # fmt: skip
    assert set(basis.stat) == set(basis.files)


def test_hidden_files_under_judges_are_never_inputs(tmp_path: Path) -> None:
    """A temporary that is still there when hashed is left out too: its stamp would go stale
    the instant the write ends."""
    run = judged_run(tmp_path, ("eq",))
    (run / "judges" / "eq" / ".judge.json.k3v9x0qa").write_text("{", encoding="utf-8")
    (run / "judges" / ".DS_Store").write_bytes(b"\0")
    basis = basis_of(run, Variant("medlens"))
    assert not [name for name in basis.files if "/." in name]
    assert "judges/eq/judgements.jsonl" in basis.files
