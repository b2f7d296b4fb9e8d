"""The served-model summary `board` and `compare` read from records by three pyarrow columns
equals the run store's (and the store decides when the file is not one record per item)."""

from __future__ import annotations

import json
from pathlib import Path

from medlens.runs.provenance import environment_notes, records_served_summary, served_summary
from medlens.runs.store import RunStore


def write_run(path: Path, lines: list[str]) -> Path:
    path.mkdir()
    (path / "run.json").write_text(json.dumps({"schema": 1, "spec": {"model": "m"}}))
    (path / "records.jsonl").write_text("".join(line + "\n" for line in lines))
    return path


def record(i: int, model: str | None, fingerprint: str | None = None) -> str:
    value = {"id": str(i), "error": None, "score": 1.0, "output": "A"}
    if model is not None:
        value |= {"served_model": model, "system_fingerprint": fingerprint}
    return json.dumps(value)


def test_pyarrow_summary_equals_the_stores(tmp_path: Path) -> None:
    lines = [record(0, "ckpt-1", "fp1"), record(1, "ckpt-1", None), record(2, None),
             record(3, "ckpt-2", "fp1")]  # fmt: skip
    run = write_run(tmp_path / "a", lines)
    expected = served_summary(RunStore.open(run).records().values())
    assert records_served_summary(run) == expected
    assert expected == {
        "served_model": {"ckpt-1": 2, "ckpt-2": 1},
        "system_fingerprint": {"fp1": 2},
    }


def test_duplicates_and_torn_lines_are_read_by_the_store(tmp_path: Path) -> None:
    lines = [record(0, "old"), record(0, "new"), record(1, "new")]
    run = write_run(tmp_path / "a", lines)
    assert records_served_summary(run) == {"served_model": {"new": 2}, "system_fingerprint": {}}
    torn = write_run(tmp_path / "b", [record(0, "x")])
    with open(torn / "records.jsonl", "a") as handle:
        handle.write('{"id": "1", "served')
    assert records_served_summary(torn) == {"served_model": {"x": 1}, "system_fingerprint": {}}


def test_environment_notes_name_runs_served_by_other_models(tmp_path: Path) -> None:
    a = write_run(tmp_path / "a", [record(0, "ckpt-1")])
    b = write_run(tmp_path / "b", [record(0, "ckpt-2")])
    notes = environment_notes([a, b])
    assert notes == ["a and b ran in different environments (served_model: ckpt-1 → ckpt-2)"]
    known = {"served_model": {"ckpt-1": 1}, "system_fingerprint": {}}
    assert environment_notes([a, b], served_of=lambda path: known) == []
