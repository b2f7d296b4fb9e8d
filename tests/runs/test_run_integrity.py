"""Run store integrity: compaction keeps errors, damaged lines are named, permanent errors stay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from medlens.core.errors import RunMismatchError
from medlens.core.items import Item
from medlens.runs.lock import RunLockedError, hold_run_lock, lock_holder
from medlens.runs.store import RunStore

ITEMS = [
    Item(id=str(i), question=f"Q{i}", kind="choice", options={"A": "a", "B": "b"}, answer="A")
    for i in range(4)
]
SPEC = {"benchmark": {"content_hash": "abc"}, "model": "random?seed=0", "prompt": "medlens"}


def record(item_id: str, error: tuple[str, str] | None = None) -> dict[str, object]:
    return {
        "id": item_id,
        "output": None if error else "A",
        "error": {"type": error[0], "message": error[1]} if error else None,
        "score": None if error else 1.0,
    }


def test_compaction_keeps_each_errored_items_last_error(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0"))
    store.append(record("1", ("timeout", "first try")))
    store.append(record("1", ("server", "HTTP 500: second try")))
    store.append(record("2", ("server", "HTTP 502")))
    store.append(record("2"))  # answered on a later attempt: the answer wins
    store.close()
    again = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    again.close()
    lines = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert [(r["id"], (r["error"] or {}).get("message")) for r in lines] == [
        ("0", None),
        ("1", "HTTP 500: second try"),
        ("2", None),
    ]
    assert again.done_ids() == {"0", "2"}


def test_damaged_middle_line_is_reported_with_its_number(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0"))
    store.append(record("1"))
    store.close()
    file = tmp_path / "r" / "records.jsonl"
    lines = file.read_text().splitlines()
    file.write_text("\n".join([lines[0], '{"id": "1", "out', lines[1]]) + "\n" + '{"id": "3"')
    reader = RunStore.open(tmp_path / "r")
    assert reader.damaged == [
        f"{file}, line 4: torn last line (a killed write)",
        f"{file}, line 2: damaged (not a JSON record with an id)",
    ]
    assert file.read_text().count("\n") == 3  # reading changed nothing
    resumed = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    assert len(resumed.damaged) == 2 and resumed.done_ids() == {"0", "1"}
    assert file.read_text().count("\n") == 2


def test_permanent_errors_are_not_retried_unless_asked(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0", ("image", "not an image")))
    store.append(record("1", ("input", "missing file")))
    store.append(record("2", ("timeout", "slow")))
    store.close()
    again = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    assert again.done_ids() == {"0", "1"}
    assert again.done_ids(retry_errors=True) == set()


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_a_refused_spec_changes_nothing(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0", ("timeout", "slow")))
    store.append(record("0", ("timeout", "slow again")))
    store.close()
    with open(tmp_path / "r" / "records.jsonl", "a") as handle:
        handle.write('{"id": "1", "tor')
    before = snapshot(tmp_path / "r")
    with pytest.raises(RunMismatchError):
        RunStore.open_or_create(tmp_path / "r", {**SPEC, "prompt": "vlmeval"}, ITEMS)
    assert snapshot(tmp_path / "r") == before


def test_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    run = tmp_path / "r"
    assert lock_holder(run) is None
    with hold_run_lock(run, "medlens run"):
        holder = lock_holder(run)
        assert holder is not None and "medlens run" in holder
        with (
            pytest.raises(RunLockedError, match=r"being written by PID \d+ on "),
            hold_run_lock(run, "medlens judge"),
        ):
            pass
        assert "medlens run" in (lock_holder(run) or "")  # the refusal kept the description
    assert lock_holder(run) is None
    with hold_run_lock(run, "medlens judge"):
        pass


def test_a_dead_holders_lock_is_taken_over_with_a_note(tmp_path: Path) -> None:
    run = tmp_path / "r"
    run.mkdir()
    # what a SIGKILLed writer leaves: its description, but no flock (the kernel released it)
    (run / ".lock").write_text(
        json.dumps({"pid": 999999999, "host": "h", "command": "medlens run"})
    )
    notes: list[str] = []
    with hold_run_lock(run, "medlens run", note=notes.append):
        pass
    assert len(notes) == 1 and "PID 999999999 on h" in notes[0] and "no longer running" in notes[0]
