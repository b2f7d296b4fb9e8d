from __future__ import annotations

import json
from pathlib import Path

import pytest

from medlens.core.errors import MedlensError, RunMismatchError
from medlens.core.items import Item
from medlens.runs.store import RunStore

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
    # the errored record stays (its error is reported) and is retried on resume
    assert [json.loads(line)["id"] for line in lines] == ["0", "1"]


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


def test_run_files_get_the_mode_of_a_plain_open(tmp_path: Path) -> None:
    """Atomic writes went through mkstemp (0600): teammates could not read a shared run."""
    import os

    mask = os.umask(0o022)
    try:
        store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
        store.append(record("0"))
        store.close()
        store.save_run()
    finally:
        os.umask(mask)
    for name in ("run.json", "items.jsonl", "records.jsonl"):
        assert (tmp_path / "r" / name).stat().st_mode & 0o777 == 0o644, name


def test_atomic_writes_in_two_threads_keep_the_users_umask(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A study's judge stages write side by side. write_atomic read the umask by setting it to 0
    and back: a thread writing inside that window made its file 0666 (and, had it restored
    last, left the whole process at umask 0). The first thread is held in the window here
    (events), as far as it opens one."""
    import os
    import threading

    from medlens.runs.files import write_atomic

    real_umask, held, release = os.umask, threading.Event(), threading.Event()

    def umask(mask: int) -> int:
        old = real_umask(mask)
        if mask == 0 and not held.is_set():  # the first thread's window: umask 0 now
            held.set()
            assert release.wait(60)
        return old

    def first() -> None:
        try:
            write_atomic(tmp_path / "eq.json", "{}\n")
        finally:
            held.set()  # reached the window, or finished without opening one

    mask = real_umask(0o022)
    try:
        monkeypatch.setattr(os, "umask", umask)
        thread = threading.Thread(target=first)
        thread.start()
        assert held.wait(60)
        write_atomic(tmp_path / "rubric.json", "{}\n")
        release.set()
        thread.join(60)
        monkeypatch.undo()
        assert real_umask(0o022) == 0o022
    finally:
        release.set()
        real_umask(mask)
    for name in ("eq.json", "rubric.json"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name


@pytest.mark.parametrize("content", ['{"x": 1}', "[1, 2]", '{"spec": "demo"}'])
def test_a_run_json_without_spec_is_user_error(tmp_path: Path, content: str) -> None:
    """A foreign or hand-edited run.json made every command end in a KeyError traceback."""
    (tmp_path / "run.json").write_text(content)
    with pytest.raises(MedlensError, match=r"run\.json: not a medlens run file"):
        RunStore.open(tmp_path)


def test_damaged_run_files_never_end_in_a_traceback(tmp_path: Path) -> None:
    """A record line without an id is dropped (its item runs again); an items.jsonl line that
    is no item names the file and line (both were KeyError tracebacks)."""
    store = RunStore.open_or_create(tmp_path / "r", SPEC, ITEMS)
    for item_id in ("0", "1"):
        store.append(record(item_id))
    store.close()
    with open(tmp_path / "r" / "records.jsonl", "a") as handle:
        handle.write('{"foo": 1}\n[1]\n')
    assert RunStore.open(tmp_path / "r").done_ids() == {"0", "1"}
    items = (tmp_path / "r" / "items.jsonl").read_text().splitlines()
    items[1] = '{"id": "1", "question": "Q1"}'
    (tmp_path / "r" / "items.jsonl").write_text("\n".join(items) + "\n")
    with pytest.raises(MedlensError, match=r"items\.jsonl, line 2: not an item \(missing field"):
        RunStore.open(tmp_path / "r").items()
