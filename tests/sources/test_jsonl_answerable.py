"""`jsonl:` refuses the items `medlens check` lists (blank question, empty gold, one option,
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
    assert f"medlens check jsonl:{bench}" in " ".join(result.output.split())
    assert not (tmp_path / "runs").exists()
    check = CliRunner().invoke(app, ["check", f"jsonl:{bench}"])
    assert "Traceback" not in check.output and "2 items" in check.output


BAD_ROWS = {
    3: {"question": "  "},
    5: {"kind": "open", "options": {}, "answer": " "},
    6: {"options": {"A": "x"}},
    9: {"options": {"A": "Liver", "B": "y", "C": " liver"}},
    11: {"answer": "C"},
    14: {"options": {"A": "x", "B": "x"}},
    15: {"question": ""},
}
"""Bad items by line number: blank question, empty gold, one option, options alike, gold not
an option."""


def test_a_file_with_many_bad_items_is_refused_naming_the_count_and_every_line(
    tmp_path: Path,
) -> None:
    bench = tmp_path / "b.jsonl"
    rows = [{**GOOD, "id": f"q{n}", **BAD_ROWS.get(n, {})} for n in range(1, 17)]
    bench.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # one line, however long
    line = " ".join(result.stderr.split())
    assert line.startswith(f"medlens: error: {bench}: 7 items that `medlens check` lists: ")
    assert "line 3, field 'question' (id 'q3'): blank question" in line
    assert "line 5, field 'answer' (id 'q5'): empty gold answer" in line
    assert "line 6, field 'options' (id 'q6'): one option only" in line
    assert "and 4 more (lines 9, 11, 14, 15)" in line
    assert not (tmp_path / "r").exists()
    check = CliRunner().invoke(app, ["check", f"jsonl:{bench}"])
    listed = " ".join(check.output.split())
    assert (
        "WARN answerable: 5 items have a blank question, one option or two options alike" in listed
    )
    for item_id in ("q3", "q6", "q9", "q14", "q15"):
        assert f"{item_id}: " in listed
    assert "q5: empty gold text" in listed and "q11: gold 'C' is not among the options" in listed


def test_the_refusal_stays_one_bounded_line_for_thousands_of_bad_items(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    rows = [{**GOOD, "id": f"q{n}", "options": {"A": "x", "B": "x"}} for n in range(5000)]
    bench.write_text("".join(json.dumps(row) + "\n" for row in rows))
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "random", "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    line = " ".join(result.stderr.split())
    assert (
        "5,000 items that `medlens check` lists" in line and "and 4,997 more (lines 4, 5," in line
    )
    assert ", 23, …)" in line and len(line) < 1000
    check = CliRunner().invoke(app, ["check", f"jsonl:{bench}", "--json"])
    answerable = next(c for c in json.loads(check.stdout)["checks"] if c["name"] == "answerable")
    assert answerable["data"]["count"] == 5000 and len(answerable["details"]) == 1000
