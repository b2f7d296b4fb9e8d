"""MMBU's MCQ → open rewrite on any benchmark (issue 48, item 5): ``run --rewrite both`` asks each
single-answer MCQ closed and open (the bare question, gold = the right option's text), paired
per sample, so the closed − open Δ is MMBU's paired one; ``--rewrite open`` asks the open form
only; a bad value or a benchmark without MCQs is one line, exit 2, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app

OPTIONS = {"A": "effusion", "B": "nodule", "C": "fracture"}


def bench(folder: Path, n: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [{"id": str(i), "question": f"Which finding in case {i}?", "kind": "choice",
             "options": OPTIONS, "answer": "ABC"[i % 3], "meta": {"task": "diagnosis"}}
            for i in range(n)]  # fmt: skip
    rows.append({"id": "y", "question": "Is it normal?", "kind": "yes_no", "answer": "no"})
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def replay(folder: Path, n: int) -> tuple[Path, np.ndarray, np.ndarray]:
    """Closed: right on i % 4 != 0; open: right (the option's text) on i % 2 == 0."""
    closed = np.array([1.0 if i % 4 else 0.0 for i in range(n)])
    opened = np.array([1.0 if i % 2 == 0 else 0.0 for i in range(n)])
    lines = ["index,prediction", "y,no"]
    for i in range(n):
        gold = "ABC"[i % 3]
        lines.append(f"{i},{gold if closed[i] else 'ABC'[(i + 1) % 3]}")
        lines.append(f"{i}~open,{OPTIONS[gold] if opened[i] else 'a normal study'}")
    path = folder / "answers.csv"
    path.write_text("\n".join(lines) + "\n")
    return path, closed, opened


def test_both_forms_are_asked_and_the_delta_is_paired_per_sample(tmp_path: Path) -> None:
    n = 24
    data = bench(tmp_path / "data", n)
    answers, closed, opened = replay(tmp_path / "data", n)
    run = named_run(f"jsonl:{data}", f"replay:{answers}", tmp_path / "runs", "both",
                    "--rewrite", "both")  # fmt: skip
    items = {
        json.loads(x)["id"]: json.loads(x) for x in (run / "items.jsonl").read_text().splitlines()
    }
    assert len(items) == 2 * n + 1 and items["y"]["kind"] == "yes_no"
    opened_item = items["5~open"]
    assert opened_item["kind"] == "open" and opened_item["options"] == {}
    assert (
        opened_item["question"] == "Which finding in case 5?"
        and opened_item["answer"] == "fracture"
    )
    assert opened_item["meta"]["sample_id"] == "5" and items["5"]["meta"]["sample_id"] == "5"
    assert opened_item["meta"]["label_set"] == "effusion|nodule|fracture"
    spec = json.loads((run / "run.json").read_text())["spec"]
    assert spec["rewrite"] == "both"
    gap = json.loads((run / "results.json").read_text())["closed_open"]["overall"]
    assert gap["paired"] is True and gap["n_pairs"] == n
    assert gap["delta"] == pytest.approx((closed - opened).mean())
    shown = CliRunner().invoke(app, ["show", str(run), "5~open"]).output
    assert (
        "Which finding in case 5?" in shown
        and "effusion" not in shown.split("--- prompt sent")[1].split("---")[0]
    )


def test_open_asks_the_open_form_only(tmp_path: Path) -> None:
    data = bench(tmp_path / "data", 6)
    answers, _, _ = replay(tmp_path / "data", 6)
    run = named_run(f"jsonl:{data}", f"replay:{answers}", tmp_path / "runs", "open",
                    "--rewrite", "open")  # fmt: skip
    ids = [json.loads(x)["id"] for x in (run / "items.jsonl").read_text().splitlines()]
    assert ids == [f"{i}~open" for i in range(6)] + ["y"]


@pytest.mark.parametrize(
    ("value", "rows", "said"),
    [("closed", None, "--rewrite 'closed': expected open"),
     ("open", [{"id": "1", "question": "Q?", "kind": "open", "answer": "x"}],
      "--rewrite open: the benchmark has no single-answer choice item")],
)  # fmt: skip
def test_a_bad_rewrite_is_one_line(
    tmp_path: Path, value: str, rows: list[dict[str, str]] | None, said: str
) -> None:
    data = bench(tmp_path / "data", 3)
    if rows is not None:
        data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = invoke_run(f"jsonl:{data}", "first", tmp_path / "runs", "bad", "--rewrite", value)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and said in lines[0], lines
    assert not (tmp_path / "runs" / "bad").exists()
