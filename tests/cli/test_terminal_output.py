"""Model output never reaches a terminal raw: `show`, `explain`, `extract`, error lines and
warnings all pass it through `core.terminal`, so escape sequences and bidi controls are shown
escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app
from medlens.core.terminal import terminal_safe, terminal_safe_json, terminal_safe_line

HOSTILE = (
    "B\x1b]0;pwned\x07 then \x1b]52;c;ZXZpbA==\x07 and \x1b[2J\x1b[H"
    "\x9b31m \u202eevil\u202c \u2066x\u2069 \r over\x00"
)
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\u2066", "\u2069", "\r", "\x00")


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain\ttext\nnext line", "plain\ttext\nnext line"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("a\x9bb\x7f", "a\\x9bb\\x7f"),
        ("\u202eabc\u202c", "\\u202eabc\\u202c"),
        ("line\u2028sep\r", "line\\u2028sep\\x0d"),
        ("ünïcode 中文 ✓", "ünïcode 中文 ✓"),
    ],
)
def test_terminal_safe_escapes_controls_and_keeps_text(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


def test_one_line_and_json_forms() -> None:
    assert terminal_safe_line("a\nb\tc\x1b") == "a\\nb\\tc\\x1b"
    text = json.dumps({"o": "x\x9b\u202ey\x1b"}, ensure_ascii=False)
    safe = terminal_safe_json(text)
    assert json.loads(safe) == json.loads(text)  # the same value
    assert not any(ch in safe for ch in RAW)


def replayed_run(tmp_path: Path) -> Path:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        json.dumps({"id": "q1", "question": "Which?", "kind": "choice",
                    "options": {"A": "liver", "B": "lung"}, "answer": "B"}) + "\n"
    )  # fmt: skip
    run = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "source")
    records = run / "records.jsonl"
    record = json.loads(records.read_text())
    record["output"] = HOSTILE
    records.write_text(json.dumps(record, ensure_ascii=False) + "\n")
    return named_run(f"jsonl:{bench}", f"replay:{run}", tmp_path / "runs", "replayed")


def test_show_prints_a_replayed_answer_with_escape_sequences_escaped(tmp_path: Path) -> None:
    run = replayed_run(tmp_path)
    text = CliRunner().invoke(app, ["show", str(run), "q1"])
    assert text.exit_code == 0, text.output
    assert "output: B\\x1b]0;pwned\\x07" in text.output and "\\u202eevil" in text.output
    assert not any(ch in text.output for ch in RAW)
    as_json = CliRunner().invoke(app, ["show", str(run), "q1", "--json"])
    assert as_json.exit_code == 0, as_json.output
    assert not any(ch in as_json.output for ch in RAW)
    assert json.loads(as_json.output)["record"]["output"] == HOSTILE  # the value is intact


def test_extract_output_is_safe_json(tmp_path: Path) -> None:
    line = json.dumps({"output": "zzz \u202e\x9bqq", "gold": "zzz \u202e\x9bqq"})
    result = CliRunner().invoke(app, ["extract", "--kind", "open"], input=line + "\n")
    assert result.exit_code == 0, result.output
    assert not any(ch in result.output for ch in RAW)


def test_error_lines_show_file_text_escaped(tmp_path: Path) -> None:
    hostile_id = tmp_path / "bench\x1b[2J.jsonl"
    result = CliRunner().invoke(
        app, ["run", "--bench", f"jsonl:{hostile_id}", "--model", "random", "--out", str(tmp_path)]
    )
    assert result.exit_code == 2
    assert "\\x1b[2J" in result.output and "\x1b" not in result.output
