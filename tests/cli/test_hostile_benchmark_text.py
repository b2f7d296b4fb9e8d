"""Ids, axis values and option texts of a benchmark are untrusted like model output: every
command that prints them (tables, md, html, JSON) shows their control and bidi characters
escaped, through the one sanitiser, instead of handing them to the terminal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from medlens.cli import app

HOSTILE = "\x1b]0;PWNED\x07\x1b[2J\u202e\x9b"
RAW = ("\x1b", "\u202e", "\x9b")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("hostile")
    lines = []
    for i in range(12):
        meta = {"organ": "lung" + HOSTILE if i % 2 else "liver", "task": "t"}
        lines.append(json.dumps({
            "id": f"q{i}" + (HOSTILE if i == 0 else ""), "question": f"question {i}? {HOSTILE}",
            "kind": "choice", "options": {"A": f"alpha{HOSTILE}", "B": "beta", "C": "gamma",
                                          "D": "delta"},
            "answer": "ABCD"[i % 4], "meta": meta,
        }))  # fmt: skip
    bench = folder / "bench.jsonl"
    bench.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = folder / "runs"
    return [named_run(f"jsonl:{bench}", f"random?seed={s}", out, f"r{s}") for s in range(5)]


@pytest.mark.parametrize(
    "command",
    [
        ("report", "{0}"),
        ("report", "{0}", "--format", "md"),
        ("slice", "{0}", "--by", "organ"),
        ("compare", "{0}", "{1}", "--by", "organ"),
        ("board", "{0}", "{1}", "--by", "organ"),
        ("board", "{0}", "{1}", "--by", "organ", "--format", "md"),
        ("board", "{0}", "{1}", "--by", "organ", "--json"),
        ("subgroups", "{0}", "--by", "organ", "--json"),
        ("items", "audit", "{0}", "{1}", "{2}", "{3}", "{4}"),
        ("items", "audit", "{0}", "{1}", "{2}", "{3}", "{4}", "--format", "md"),
        ("items", "audit", "{0}", "{1}", "{2}", "{3}", "{4}", "--json"),
    ],
)
def test_no_raw_control_character_reaches_the_terminal(
    runs: list[Path], command: tuple[str, ...]
) -> None:
    args = [part.format(*runs) for part in command]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    for raw in RAW:
        assert raw not in result.output, (args, raw)
    if "--json" in args:
        json.loads(result.stdout)  # still JSON, with the characters as \\u escapes
    else:
        assert "\\x1b" in result.output, args
