"""Golden outputs: run a script of CLI commands and compare every output with a stored copy.

A script is a list of :class:`Step`. Each step runs one ``medlens`` command in-process (typer's
runner, a fixed terminal width) inside one workspace folder, and its exit code, its output and
the files it names are appended to one text transcript, normalised so that what legitimately
changes between two machines or two days (the workspace path, timestamps, latencies, ports,
package versions, the git commit) reads the same. The transcript must equal the stored one
byte for byte; ``MEDLENS_UPDATE_GOLDEN=1`` rewrites the stored copy instead (review the diff).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

GOLDEN_DIR = Path(__file__).with_name("outputs")
WIDTH = "110"

# Fields whose values are measured, not computed: they differ on every run. (A request's
# fingerprint hashes image references, whose paths lie in the test session's data folder; a
# cache key hashes the judge server's endpoint, port included; a spec hash covers the paths of
# --exclude files. The specs themselves are shown in full.)
VOLATILE_KEYS = {
    "fingerprint",
    "cache_key",
    "spec_hash",
    "latency",
    "created",
    "started",
    "finished",
    "updated",
    "elapsed",
    "wall_s",
    "seconds",
    "duration",
    "items_per_second",
    "environment",
    "environment_changes",
    "imported",
    "pid",
    "host",
    "latency_mean",
    "latency_p95",
    "derived_from",
}


@dataclass(frozen=True)
class Step:
    """One command of a golden script."""

    argv: Sequence[str]
    """Arguments after ``medlens``; ``{ws}`` is the workspace, ``{real}`` the real-data root."""
    stdin: str | None = None
    files: Sequence[str] = ()
    """Files (paths with the same placeholders) whose normalised content joins the transcript."""
    digest: Sequence[str] = ()
    """Files recorded by their normalised sha256 only (large or binary)."""
    before: Callable[[Path], None] | None = field(default=None, compare=False)
    """Prepares the workspace before the command (writes an input file, say)."""


class Transcript:
    """The normalised record of one script's outputs."""

    def __init__(self, workspace: Path, real: Path) -> None:
        self.workspace = workspace
        self.real = real
        self.parts: list[str] = []

    def fill(self, text: str) -> str:
        return text.replace("{ws}", str(self.workspace)).replace("{real}", str(self.real))

    def normalise(self, text: str) -> str:
        folders = [(self.workspace, "<WS>"), (self.real, "<REAL>")]
        folders += [
            (Path(os.environ[v]), f"<{v}>")
            for v in ("MEDLENS_DATA", "MEDLENS_CACHE")
            if v in os.environ
        ]
        spellings = sorted(
            (
                (spelling, marker)
                for folder, marker in folders
                for spelling in {str(folder.resolve()), str(folder)}
            ),
            key=lambda pair: -len(pair[0]),
        )  # the longest first: the data folder lies inside the workspace
        for spelling, marker in spellings:  # as written, and as markdown escapes it
            text = text.replace(spelling, marker).replace(spelling.replace("_", "\\_"), marker)
        text = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:<PORT>", text)
        text = re.sub(
            r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?", "<TIME>", text
        )
        text = re.sub(r"\b\d[\d,]*(\.\d+)? (\w+)/s\b", r"<RATE> \2/s", text)
        text = re.sub(r"\b\d+:\d\d:\d\d\b", "<CLOCK>", text)
        text = re.sub(r"\bpid \d+\b", "pid <PID>", text)
        text = re.sub(r"(latency\W{0,12})\d[\d.e+-]*", r"\1<LATENCY>", text)
        text = re.sub(r"\b\d+\.\d{13,}\b", lambda m: f"{float(m.group()):.12g}", text)
        # the machine a run was made on (the git commit moves with every commit)
        text = re.sub(r"\(commit [0-9a-f]{7,40}\)", "(commit <COMMIT>)", text)
        text = re.sub(r"Python \d+\.\d+\.\d+ on [^\s<|]+", "Python <PYTHON> on <PLATFORM>", text)
        text = re.sub(
            r"packages: [\w.-]+ [\w.+-]+(, [\w.-]+ [\w.+-]+)*", "packages: <PACKAGES>", text
        )
        # a rating study's id hashes the run's spec hash (see VOLATILE_KEYS)
        text = re.sub(r"\b([rpe])[0-9a-f]{12}\b", r"\1<STUDY>", text)
        return text

    def add(self, heading: str, body: str) -> None:
        self.parts.append(f"### {heading}\n{body.rstrip()}\n")

    def text(self) -> str:
        return "\n".join(self.parts)


def scrub(value: Any) -> Any:
    """JSON with its measured fields replaced by a marker, recursively."""
    if isinstance(value, dict):
        return {k: ("<VOLATILE>" if k in VOLATILE_KEYS else scrub(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, float):
        return float(
            f"{value:.12g}"
        )  # sums over records in completion order differ in the last bit
    return value


def json_text(text: str) -> str:
    """Canonical JSON text (or JSON lines) with measured fields scrubbed; other text unchanged."""
    try:
        return json.dumps(scrub(json.loads(text)), indent=1, sort_keys=True, ensure_ascii=False)
    except ValueError:
        pass
    lines = text.splitlines()
    try:  # JSON lines: sorted, because concurrent requests finish in any order
        return "\n".join(
            sorted(json.dumps(scrub(json.loads(x)), sort_keys=True) for x in lines if x)
        )
    except ValueError:
        return text


def file_text(path: Path) -> str:
    """A file's content as the transcript shows it: xlsx as cell values, JSON canonical."""
    if not path.exists():
        return "<absent>"
    if path.is_dir():
        return "\n".join(sorted(str(p.relative_to(path)) for p in path.rglob("*")))
    if path.suffix == ".xlsx":
        return xlsx_text(path)
    data = path.read_bytes()
    try:
        return json_text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return f"<binary {len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()}>"


def xlsx_text(path: Path) -> str:
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(path.read_bytes()), read_only=True)
    out = []
    for sheet in book.worksheets:
        out.append(f"[sheet {sheet.title}]")
        out.extend(
            "\t".join("" if v is None else str(v) for v in row)
            for row in sheet.iter_rows(values_only=True)
        )
    return "\n".join(out)


def run_script(steps: Sequence[Step], workspace: Path, real: Path) -> str:
    """Run every step in order; the normalised transcript."""
    from medlens.cli import app

    transcript = Transcript(workspace, real)
    runner = CliRunner()
    old = os.getcwd()
    os.chdir(workspace)
    try:
        for step in steps:
            if step.before is not None:
                step.before(workspace)
            argv = [transcript.fill(a) for a in step.argv]
            stdin = transcript.fill(step.stdin) if step.stdin is not None else None
            result = runner.invoke(app, argv, input=stdin, env={"COLUMNS": WIDTH, "TERM": "dumb"})
            output = json_text(result.output)
            transcript.add(f"medlens {' '.join(argv)} -> exit {result.exit_code}", output)
            for name in step.files:
                transcript.add(f"file {name}", file_text(Path(transcript.fill(name))))
            for name in step.digest:
                body = file_text(Path(transcript.fill(name)))
                digest = hashlib.sha256(transcript.normalise(body).encode()).hexdigest()
                if os.environ.get("GOLDEN_DEBUG"):
                    Path(os.environ["GOLDEN_DEBUG"], f"{len(transcript.parts):04d}").write_text(
                        transcript.normalise(body)
                    )
                transcript.add(f"digest {name}", digest)
    finally:
        os.chdir(old)
    return transcript.normalise(transcript.text())


def check_golden(name: str, text: str) -> None:
    """The transcript equals tests/golden/outputs/NAME.txt (or rewrites it on request)."""
    path = GOLDEN_DIR / f"{name}.txt"
    if os.environ.get("MEDLENS_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing: run with MEDLENS_UPDATE_GOLDEN=1 to record it"
    expected = path.read_text(encoding="utf-8")
    path.with_suffix(".actual").unlink(missing_ok=True)  # a copy from an earlier failure
    if text != expected:
        import difflib

        path.with_suffix(".actual").write_text(text, encoding="utf-8")  # for a full diff

        diff = "".join(
            list(
                difflib.unified_diff(
                    expected.splitlines(True), text.splitlines(True), "golden", "now"
                )
            )[:200]
        )
        raise AssertionError(f"golden output {name} changed:\n{diff}")
