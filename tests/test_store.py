from __future__ import annotations

import json
from pathlib import Path

import pytest

from medlens.errors import MedlensError, RunMismatchError
from medlens.items import Item
from medlens.store import RunStore

ITEMS = [
    Item(id=str(i), question=f"Q{i}", kind="choice", options={"A": "a", "B": "b"}, answer="A")
    for i in range(3)
]
SPEC = {"benchmark": {"content_hash": "abc"}, "model": "random?seed=0", "prompt": "medlens"}


def record(item_id: str, error: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "id": item_id,
        "output": None if error else "A",
        "error": error,
        "score": None if error else 1.0,
    }


def test_create_writes_run_json_and_items(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["spec"] == SPEC and len(run["spec_hash"]) == 64
    assert [i.id for i in store.items()] == ["0", "1", "2"]


def test_append_then_resume_skips_done(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0"))
    store.append(record("1", {"type": "timeout", "message": "slow"}))
    store.close()
    again = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    assert again.done_ids() == {"0"}
    lines = (tmp_path / "r" / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["0"]  # errored record compacted away


def test_read_only_open_keeps_errors_for_reporting(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("1", {"type": "timeout", "message": "slow"}))
    store.close()
    assert RunStore.open(tmp_path / "r").records()["1"]["error"]["type"] == "timeout"


def test_torn_last_line_is_dropped(tmp_path: Path) -> None:
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    store.append(record("0"))
    store.close()
    with open(tmp_path / "r" / "records.jsonl", "a") as handle:
        handle.write('{"id": "1", "outp')
    again = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    assert again.done_ids() == {"0"}
    assert (tmp_path / "r" / "records.jsonl").read_text().endswith("}\n")


def test_changed_spec_refuses_and_says_what_differs(tmp_path: Path) -> None:
    RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS).close()
    with pytest.raises(RunMismatchError, match=r"prompt: \"medlens\" → \"vlmeval\""):
        RunStore.open_or_create(tmp_path / "r", {**SPEC, "prompt": "vlmeval"}, ITEMS)


def test_open_non_run_is_user_error(tmp_path: Path) -> None:
    with pytest.raises(MedlensError, match="not a medlens run directory"):
        RunStore.open(tmp_path)
