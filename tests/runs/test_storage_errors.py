"""A full disk (or any refused write) on a run folder: one line naming the file and the remedy,
exit code 4, nothing lost, and the same command resumes."""

from __future__ import annotations

import errno
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from medlens.core.errors import EXIT_STORAGE, StorageError
from medlens.runs import files
from medlens.runs.files import JsonLines, write_atomic


def no_space(*args: Any, **kwargs: Any) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_append_on_a_full_disk_names_the_file_and_the_remedy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = JsonLines(tmp_path / "records.jsonl")
    log.append({"id": "a"})
    log.close()
    monkeypatch.setattr(files, "open", no_space, raising=False)
    with pytest.raises(StorageError) as caught:
        JsonLines(tmp_path / "records.jsonl").append({"id": "b"})
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'records.jsonl'}: cannot write: No space left")
    assert "(ENOSPC)" in message and "free space" in message and "resumes" in message
    assert caught.value.exit_code == EXIT_STORAGE == 4
    assert (tmp_path / "records.jsonl").read_text() == '{"id":"a"}\n'  # nothing lost


def test_atomic_write_on_a_full_disk_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")
    monkeypatch.setattr(files.os, "fsync", no_space)
    with pytest.raises(StorageError, match=r"results\.json: cannot write: No space left"):
        write_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temporary file left


def medlens(args: list[str], max_file_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m medlens ARGS``; with `max_file_bytes`, no file it writes may grow past that
    size (RLIMIT_FSIZE: a write beyond it fails with EFBIG, as on a full disk)."""

    def limit() -> None:
        if max_file_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [sys.executable, "-m", "medlens", *args], capture_output=True, text=True, preexec_fn=limit
    )


def test_a_run_that_fills_its_disk_stops_in_one_line_and_resumes(tmp_path: Path) -> None:
    bench = tmp_path / "bench.jsonl"  # short items: each record is larger than its item
    bench.write_text("".join(
        json.dumps({"id": f"q{i}", "question": "Q?", "kind": "choice",
                    "options": {"A": "a", "B": "b"}, "answer": "A"}) + "\n"
        for i in range(400)
    ))  # fmt: skip
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path)]
    sizing = medlens([*args, "--name", "sizing"])
    assert sizing.returncode == 0, sizing.stderr
    items = (tmp_path / "sizing" / "items.jsonl").stat().st_size
    records = (tmp_path / "sizing" / "records.jsonl").stat().st_size
    assert records > items + 4096  # so that a limit between them stops the records only
    limited = medlens([*args, "--name", "full"], max_file_bytes=(items + records) // 2)
    assert limited.returncode == 4, limited.stderr
    errors = [line for line in limited.stderr.splitlines() if "error" in line]
    assert errors == [
        f"medlens: error: {tmp_path / 'full' / 'records.jsonl'}: cannot write: File too large "
        "(EFBIG); the file outgrew the size this system allows; point medlens at another "
        "folder, then rerun the same command (what was already written is kept: a run resumes "
        "from its records)"
    ], limited.stderr
    kept = (tmp_path / "full" / "records.jsonl").read_bytes().count(b"\n")
    assert kept > 0
    resumed = medlens([*args, "--name", "full"])
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming: {kept} of 400 items already answered" in resumed.stderr
    lines = (tmp_path / "full" / "records.jsonl").read_text().splitlines()
    assert sorted(json.loads(line)["id"] for line in lines) == sorted(
        json.loads(line)["id"] for line in (tmp_path / "sizing" / "records.jsonl").open()
    )
