"""lmms-eval's MedQA number to the digit: its random fallback consumes one ``random.Random(0)``
stream in document order. Checked against lmms-eval 0.7.3's own parser, run once on real MedQA
questions and recorded as a fixture (``fixtures/record_lmms_eval_medqa.py`` says how)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from cli_runs import named_run
from data_paths import realdata_dir
from medlens.cli import app
from medlens.extract.peers.lmms_eval import COMMIT, read_in_document_order
from medlens.runs.store import RunStore

FIXTURE = Path(__file__).with_name("fixtures") / "lmms_eval_medqa_0.7.3.json"


def _fixture() -> dict:
    return json.loads(FIXTURE.read_text("utf-8"))


def _items() -> list:
    from medlens.api import load_benchmark

    items = list(load_benchmark(f"medqa:{realdata_dir('medqa')}").items())
    return items[: len(_fixture()["rows"])]


def test_fixture_is_lmms_eval_0_7_3_at_the_commit_medlens_follows() -> None:
    fixture = _fixture()
    assert fixture["lmms_eval_version"] == "0.7.3"
    assert fixture["same_file_at_commit"] == COMMIT
    assert sum(row["random_fallback"] for row in fixture["rows"]) >= 10


def test_readings_in_document_order_equal_lmms_eval_item_by_item() -> None:
    rows = _fixture()["rows"]
    items = _items()
    assert [item.id for item in items] == [row["id"] for row in rows]
    readings = read_in_document_order(
        [(item, row["output"]) for item, row in zip(items, rows, strict=True)]
    )
    assert [r.answer for r in readings] == [row["prediction"] for row in rows]
    assert [r.score for r in readings] == [row["score"] for row in rows]
    drawn = [r.rule == "random_fallback" for r in readings]
    assert drawn == [row["random_fallback"] for row in rows]


def test_a_run_and_explain_give_lmms_eval_s_accuracy_whatever_the_answer_order(
    tmp_path: Path,
) -> None:
    """Answers arrive in no fixed order: the run redraws its fallbacks in document order when
    it finishes, and explain reads them the same way."""
    fixture = _fixture()
    replay = tmp_path / "outputs.jsonl"
    rows = list(reversed(fixture["rows"]))  # file order is not document order
    replay.write_text("".join(json.dumps({"index": r["id"], "answer": r["output"]}) + "\n"
                              for r in rows), "utf-8")  # fmt: skip
    bench = f"medqa:{realdata_dir('medqa')}"
    n = str(len(rows))
    run = named_run(bench, f"replay:{replay}", tmp_path / "runs", "lmms", "--extract",
                    "lmms-eval", "--limit", n, "--concurrency", "7")  # fmt: skip
    records = RunStore.open(run).records()
    by_id = {row["id"]: row for row in fixture["rows"]}
    assert {i: r["extraction"]["answer"] for i, r in records.items()} == {
        i: row["prediction"] for i, row in by_id.items()
    }
    results = json.loads((run / "results.json").read_text("utf-8"))
    assert results["overall"]["score"] == fixture["accuracy"]
    ours = named_run(bench, f"replay:{replay}", tmp_path / "runs", "ours", "--limit", n)
    explained = CliRunner().invoke(app, ["explain", str(ours), "--against", "lmms-eval", "--json"])
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.stdout)["against_score"] == fixture["accuracy"]
