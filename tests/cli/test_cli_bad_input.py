"""Bad input through the real command line: one line naming file, row and field; exit 2; no run
directory. A bad image inside a valid file is that item's error and the run goes on."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

HEADER = "index\tquestion\tA\tB\tanswer\timage\n"


def png_b64() -> str:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), (10, 20, 30)).save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def row(index: str, answer: str = "A", image: str | None = None) -> str:
    return f"{index}\tWhich?\tone\ttwo\t{answer}\t{image if image is not None else png_b64()}\n"


BAD_TSVS: dict[str, tuple[bytes, str]] = {
    "empty file": (b"", "empty"),
    "header only": (HEADER.encode(), "no data rows"),
    "missing image column": (b"index\tquestion\tA\tB\tanswer\n1\tQ\ta\tb\tA\n", "'image'"),
    "missing question column": (b"index\tA\tB\tanswer\timage\n" + b"1\ta\tb\tA\tx\n", "'question'"),
    "duplicate index": ((HEADER + row("1") + row("1")).encode(), "duplicate"),
    "gold not an option": ((HEADER + row("1", answer="C")).encode(), "'answer'"),
    "non-UTF-8 bytes": (
        HEADER.encode() + row("1").encode().replace(b"Which?", b"Wh\xffich?"),
        "UTF-8",
    ),
}


def run_medlens(
    bench: str, out: Path, *extra: str, model: str = "first"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", bench, "--model", model,
         "--out", str(out), *extra],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_TSVS))
def test_bad_tsv_is_one_line_exit_2_and_no_run_directory(case: str, tmp_path: Path) -> None:
    content, needle = BAD_TSVS[case]
    path = tmp_path / "bench.tsv"
    path.write_bytes(content)
    proc = run_medlens(f"gmai:{path}", tmp_path / "runs")
    assert proc.returncode == 2, proc.stderr
    message = proc.stderr.strip()
    assert "\n" not in message and "Traceback" not in message
    assert str(path) in message and needle.lower() in message.lower(), message
    assert not (tmp_path / "runs").exists()


def test_jsonl_image_outside_its_folder_is_refused(tmp_path: Path) -> None:
    item = {"id": "1", "question": "Q", "kind": "choice", "options": {"A": "a", "B": "b"},
            "answer": "A", "images": [{"source": "file", "path": "../../etc/passwd"}]}  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(item) + "\n")
    proc = run_medlens(f"jsonl:{path}", tmp_path / "runs")
    assert proc.returncode == 2
    assert "line 1" in proc.stderr and "outside" in proc.stderr
    assert not (tmp_path / "runs").exists()


def test_bad_images_are_item_errors_and_the_run_goes_on(tmp_path: Path) -> None:
    # Cells of more than 64 characters (shorter ones reference another row's image).
    not_an_image = base64.b64encode(b"plain text, not a picture " * 4).decode()
    not_base64 = "@@@ this is not base64 @@@" * 4
    rows = [row("1"), row("2", image=not_an_image), row("3", image=not_base64), row("4")]
    path = tmp_path / "bench.tsv"
    path.write_text(HEADER + "".join(rows))
    from loopback_server import ServerConfig, serve

    # a model that reads images (the baselines never do, so they meet no bad image)
    with serve(ServerConfig()) as server:
        model = f"openai:m?base_url={server.base_url}&max_retries=0"
        proc = run_medlens(f"gmai:{path}", tmp_path / "runs", "--name", "r", model=model)
        assert proc.returncode == 1, proc.stderr  # finished, but errors exceed --max-error-rate 0
        assert "image errors: 2 (e.g. item 2: " in proc.stderr  # says why, not only how many
        records = [json.loads(line) for line in (tmp_path / "runs" / "r" / "records.jsonl").open()]
        errors = {r["id"]: r["error"] for r in records if r["error"]}
        assert set(errors) == {"2", "3"} and all(e["type"] == "image" for e in errors.values())
        assert sorted(r["id"] for r in records) == ["1", "2", "3", "4"]
        again = run_medlens(
            f"gmai:{path}", tmp_path / "runs", "--name", "r", "--max-error-rate", "0.5", model=model
        )
    # image errors are permanent: not retried (--retry-errors would), still 50%
    assert again.returncode == 0 and "resuming: 4 of 4" in again.stderr, again.stderr


@pytest.mark.parametrize("rate", ["-1", "1.5"])
def test_max_error_rate_outside_0_1_is_refused(rate: str, tmp_path: Path) -> None:
    proc = run_medlens("demo", tmp_path / "runs", "--max-error-rate", rate)
    assert proc.returncode == 2 and "--max-error-rate" in proc.stderr, proc.stderr
    assert not (tmp_path / "runs").exists()
