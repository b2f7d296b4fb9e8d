"""Answers a person entered by hand (issue 48, item 5): ``run --manual FILE`` never asks the
model for those items, reads and scores the entered text, records who entered it, and every
report counts them; a bad file is one line naming file, row and column, exit 2, nothing
written; an edited file does not resume the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app


def bench(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": str(i), "question": f"Which organ {i}?", "kind": "choice",
             "options": {"A": "liver", "B": "lung"}, "answer": "B"} for i in range(4)]  # fmt: skip
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_entered_answers_are_recorded_as_such_and_counted(tmp_path: Path) -> None:
    manual = tmp_path / "typed.csv"
    manual.write_text("index,answer,entered_by,note\n1,The answer is B,Dr Ada,from the app\n"
                      "3,liver,Dr Bo,\n")  # fmt: skip
    run = named_run(f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "m",
                    "--manual", str(manual))  # fmt: skip
    records = {
        json.loads(x)["id"]: json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()
    }
    assert records["1"]["manual"] == {"entered_by": "Dr Ada", "note": "from the app"}
    assert records["1"]["output"] == "The answer is B" and records["1"]["score"] == 1.0
    assert records["3"]["manual"]["entered_by"] == "Dr Bo" and records["3"]["score"] == 0.0
    assert "manual" not in records["0"] and records["0"]["output"] != "The answer is B"
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["manual"]["file"] == "typed.csv" and spec["manual"]["items"] == 2
    results = json.loads((run / "results.json").read_text())
    assert results["manual"] == {"n": 2, "by": {"Dr Ada": 1, "Dr Bo": 1}}
    text = CliRunner().invoke(app, ["report", str(run)]).output
    assert "answers entered by hand (--manual): 2 of 4 items (by Dr Ada 1, Dr Bo 1)" in " ".join(
        text.split()
    )
    md = CliRunner().invoke(app, ["report", str(run), "--format", "md"]).output
    assert "| entered by hand | 2 of 4 items (by Dr Ada 1, Dr Bo 1)" in md
    manual.write_text("index,answer,entered_by\n1,B,Dr Ada\n")
    again = invoke_run(
        f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "m", "--manual", str(manual)
    )
    assert again.exit_code == 2 and "holds a run with a different spec" in again.output


@pytest.mark.parametrize(
    ("text", "said"),
    [("index,answer\n1,B\n", "typed.csv, line 1: no column 'entered_by'"),
     ("index,answer,entered_by\n9,B,Ada\n", "typed.csv, row 2, column 'index': '9' is no item of this run"),
     ("index,answer,entered_by\n1,B,Ada\n1,A,Bo\n", "typed.csv, row 3, column 'index': '1' entered twice"),
     ("index,answer,entered_by\n1,B,\n", "typed.csv, row 2, column 'entered_by': empty")],
)  # fmt: skip
def test_a_bad_manual_file_is_one_line(tmp_path: Path, text: str, said: str) -> None:
    (tmp_path / "typed.csv").write_text(text)
    result = invoke_run(f"jsonl:{bench(tmp_path)}", "first", tmp_path / "runs", "bad",
                        "--manual", str(tmp_path / "typed.csv"))  # fmt: skip
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "runs" / "bad").exists()
