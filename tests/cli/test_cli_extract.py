"""`medlens extract`: JSON lines in, one JSON line out each; malformed lines exit 2 naming the line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlens.cli import app

FUNDUS = {"A": "Normal", "B": "Diabetic retinopathy", "C": "Drusen", "D": "Glaucoma"}


def _lines(*records: object) -> str:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)


def _run(stdin: str, *args: str) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(app, ["extract", *args], input=stdin)
    out = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    return result.exit_code, out, result.stderr


CASES = [
    (["--kind", "choice"], {"output": "answer: (c)", "options": FUNDUS},
     {"answer": "C", "status": "ok", "method": "answer_phrase"}),
    (["--kind", "choice", "--mode", "vlmeval"], {"output": "answer: (c)", "options": FUNDUS},
     {"answer": None, "status": "unparsed", "method": "vlmeval:no_answer:Z"}),
    (["--kind", "multi_choice"], {"output": "C and A", "options": FUNDUS},
     {"answer": "AC", "status": "ok", "method": "leading_letter"}),
    (["--kind", "yes_no"], {"output": "There is no evidence of a fracture."},
     {"answer": "no", "status": "ok", "method": "statement"}),
    (["--kind", "yes_no"], {"output": "Maybe"},
     {"answer": None, "status": "unparsed", "method": "leading_word:hedge"}),
    (["--kind", "yes_no", "--maybe"], {"output": "Maybe"},
     {"answer": "maybe", "status": "ok", "method": "leading_word"}),
    (["--kind", "choice"], {"output": None, "options": FUNDUS},
     {"answer": None, "status": "empty", "method": "empty"}),
    (["--kind", "choice"], {"output": "I cannot give medical advice.", "options": FUNDUS},
     {"answer": None, "status": "refused", "method": "refusal"}),
]  # fmt: skip


@pytest.mark.parametrize(("args", "record", "expected"), CASES)
def test_one_line_in_one_line_out(
    args: list[str], record: dict[str, object], expected: dict[str, object]
) -> None:
    code, out, _ = _run(_lines(record), *args)
    assert (code, out) == (0, [expected])


def test_many_lines_keep_their_order_and_skip_blank_lines() -> None:
    stdin = _lines(*({"output": letter, "options": FUNDUS} for letter in "DCBA")) + "\n\n"
    code, out, _ = _run(stdin, "--kind", "choice")
    assert code == 0
    assert [row["answer"] for row in out] == ["D", "C", "B", "A"]


BAD_LINES = [
    ('{"output": "B", "options": ', "line 2: not valid JSON"),
    ('["B"]', "line 2: expected a JSON object"),
    ('{"options": {"A": "x"}}', "line 2: field 'output' is missing"),
    ('{"output": 3, "options": {"A": "x"}}', "line 2: field 'output' must be a string or null"),
    ('{"output": "B"}', "line 2: field 'options' is missing or empty"),
    ('{"output": "B", "options": {"a": "x"}}', "line 2: field 'options' must map letters"),
    ('{"output": "B", "options": ["x", "y"]}', "line 2: field 'options' must map letters"),
]


@pytest.mark.parametrize(("bad", "message"), BAD_LINES)
def test_malformed_line_is_one_error_line_with_exit_2(bad: str, message: str) -> None:
    stdin = _lines({"output": "B", "options": FUNDUS}) + bad + "\n"
    code, out, err = _run(stdin, "--kind", "choice")
    assert code == 2
    assert out == [{"answer": "B", "status": "ok", "method": "bare_letter"}]
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_unknown_kind_is_rejected() -> None:
    result = CliRunner().invoke(app, ["extract", "--kind", "report"], input="")
    assert result.exit_code == 2


def test_real_subprocess() -> None:
    medlens = Path(sys.executable).with_name("medlens")
    stdin = _lines({"output": "答案是B", "options": FUNDUS}, {"output": "A/C", "options": FUNDUS})
    done = subprocess.run(
        [str(medlens), "extract", "--kind", "multi_choice"],
        input=stdin, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["answer"] for line in done.stdout.splitlines()] == ["B", "AC"]
    bad = subprocess.run(
        [str(medlens), "extract", "--kind", "choice"],
        input="not json\n", capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("medlens: error: <stdin>, line 1: not valid JSON")
