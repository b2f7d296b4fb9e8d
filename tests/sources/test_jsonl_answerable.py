"""`jsonl:` refuses the items `medlens check` fails (blank question, empty gold, one option,
two options alike) in one line naming the line and field, before anything runs; `check`
still reads them (leniently) to list them all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlens.cli import app

GOOD = {
    "id": "ok",
    "question": "Which?",
    "kind": "choice",
    "options": {"A": "x", "B": "y"},
    "answer": "A",
}


@pytest.mark.parametrize(
    ("bad", "where"),
    [
        ({"question": "  "}, "line 2, field 'question': blank question"),
        (
            {"kind": "open", "options": {}, "answer": " "},
            "line 2, field 'answer': empty gold answer",
        ),
        ({"options": {"A": "x"}}, "line 2, field 'options': one option only"),
        (
            {"options": {"A": "Liver", "B": "y", "C": " liver"}},
            "line 2, field 'options': options A and C",
        ),
    ],
)
def test_items_check_fails_are_refused_before_running(
    tmp_path: Path, bad: dict[str, object], where: str
) -> None:
    bench = tmp_path / "b.jsonl"
    bench.write_text(json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "id": "bad", **bad}) + "\n")
    result = CliRunner().invoke(
        app,
        ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path / "runs")],
    )
    assert result.exit_code == 2, result.output
    assert f"{bench}, {where}" in " ".join(result.output.split())
    assert "medlens check jsonl:FILE" in result.output
    assert not (tmp_path / "runs").exists()
    check = CliRunner().invoke(app, ["check", f"jsonl:{bench}"])
    assert "Traceback" not in check.output and "2 items" in check.output
