"""The viewer's catalog without a browser: start-up reads outcomes from the derived score files
(never a record), builds items and records when a page shows them, and reads the records whole
where the score file is stale or the records file needs the store's rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import medlens.runs.view
from benchfiles import write_jsonl_benchmark
from cli_runs import named_run
from medlens.report.viewer.catalog import Query, load_catalog, matching, outcome
from medlens.runs.store import RunStore
from medlens.runs.view import RecordIndex, RunView

N_ITEMS = 40


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    bench = write_jsonl_benchmark(tmp_path / "data", N_ITEMS)
    named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "a")
    named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "b", "--seed", "1")
    return tmp_path / "runs"


def expected_outcomes(run_dir: Path) -> dict[str, str]:
    return {rid: outcome(record) for rid, record in RunStore.open(run_dir).records().items()}


def test_startup_reads_the_score_files_and_no_record(
    runs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = [expected_outcomes(runs / name) for name in ("a", "b")]

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a record was read at start-up")

    monkeypatch.setattr(RunStore, "open", refuse)
    monkeypatch.setattr(medlens.runs.view, "read_records", refuse)
    monkeypatch.setattr(RecordIndex, "__getitem__", refuse)
    (group,) = load_catalog([runs])
    assert [run.name for run in group.runs] == ["a", "b"]
    assert len(group.rows) == N_ITEMS
    for k in range(2):
        assert {row.id: row.outcomes[k] for row in group.rows} == expected[k]
    assert group.runs[0].items is group.runs[1].items  # one parse of the same items.jsonl
    monkeypatch.undo()
    row = group.rows[5]
    assert row.item.id == row.id and group.runs[1].records[row.id]["id"] == row.id
    assert group.runs[1].records[row.id] == RunStore.open(runs / "b").records()[row.id]


def test_text_filter_reads_every_record_once(runs: Path) -> None:
    (group,) = load_catalog([runs])
    records = RunStore.open(runs / "a").records()
    wanted = records["q3"]["output"]
    found = matching(group, Query(text="Question 3?"))
    assert [row.id for row in found] == ["q3"]
    found = matching(group, Query(text=str(wanted), of="a", outcome=group.rows[3].outcomes[0]))
    assert "q3" in [row.id for row in found]


def test_a_stale_score_file_gives_way_to_the_records(runs: Path) -> None:
    records = runs / "a" / "records.jsonl"
    lines = [json.loads(line) for line in records.read_text().splitlines()]
    first = lines[0]
    first["score"], first["extraction"]["status"] = None, "refused"
    records.write_text("".join(json.dumps(line, sort_keys=True, separators=(",", ":")) + "\n"
                               for line in lines))  # fmt: skip
    (group,) = load_catalog([runs])
    position = group.positions[first["id"]]
    assert group.rows[position].outcomes[0] == "refused"
    assert {row.id: row.outcomes[0] for row in group.rows} == expected_outcomes(runs / "a")


def test_records_the_index_cannot_read_are_read_by_the_store(runs: Path) -> None:
    records = runs / "b" / "records.jsonl"
    text = records.read_text()
    first = json.loads(text.splitlines()[0])
    retried = {**first, "error": {"type": "timeout", "message": "slow"}, "output": None}
    records.write_text(json.dumps(retried, sort_keys=True, separators=(",", ":")) + "\n" + text)
    lazy = RunView(runs / "b").record_index()
    assert dict(lazy) == RunStore.open(runs / "b").records()
    assert lazy[first["id"]]["error"] is None  # the answer wins over the earlier error
    records.write_text(text + '{"id": "torn')
    assert dict(RunView(runs / "b").record_index()) == RunStore.open(runs / "b").records()
