"""Contamination reporting: the model's training cutoff beside the benchmark's release on the
card, the isolation statement for exemplars, and sources scored near the ceiling flagged in
reports and boards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from data_paths import realdata_dir
from gmai_fixture import write_gmai_tsv
from medlens.checks.contamination import near_ceiling
from medlens.cli import app
from medlens.core.errors import SpecError
from medlens.core.model_info import parse_model_info


def _report(run: Path) -> str:
    result = CliRunner().invoke(app, ["report", str(run), "--format", "md"])
    assert result.exit_code == 0, result.output
    return result.output


def test_model_info_parses_a_month_and_refuses_anything_else() -> None:
    assert parse_model_info("cutoff=2024-06") == {"training_cutoff": "2024-06"}
    for bad in ("cutoff=2024-13", "cutoff=June 2024", "size=7b", "cutoff"):
        with pytest.raises(SpecError, match="--model-info"):
            parse_model_info(bad)


def test_a_cutoff_after_the_release_is_noted_on_the_card(tmp_path: Path) -> None:
    write_gmai_tsv(tmp_path / "val.tsv", n_rows=8)
    bench = f"gmai:{tmp_path / 'val.tsv'}"
    later = named_run(bench, "first", tmp_path / "runs", "later", "--model-info", "cutoff=2025-01")
    text = _report(later)
    assert (
        "model training cutoff 2025-01; benchmark first released 2024-08: the cutoff is "
        "later than the release" in text
    )
    earlier = named_run(bench, "random", tmp_path / "runs", "earlier",
                        "--model-info", "cutoff=2023-10")  # fmt: skip
    assert "the cutoff is earlier than the release" in _report(earlier)
    unknown = named_run(bench, "oracle", tmp_path / "runs", "unknown")
    assert "model training cutoff not given (--model-info cutoff=YYYY-MM)" in _report(unknown)
    spec_a = json.loads((later / "run.json").read_text())
    assert spec_a["model_info"] == {"training_cutoff": "2025-01"}
    assert "model_info" not in spec_a["spec"]  # the run's hash does not depend on it


def test_a_bad_model_info_is_one_line_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "medlens", "run", "--bench", "demo", "--model", "first",
         "--out", str(tmp_path / "runs"), "--model-info", "cutoff=2024"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 2 and "not a month YYYY-MM" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()


def test_the_isolation_statement_names_where_exemplars_came_from(tmp_path: Path) -> None:
    bench = f"mmlu:{realdata_dir('mmlu_medical')}?subjects=anatomy"
    zero = named_run(bench, "oracle", tmp_path, "zs", "--limit", "2")
    assert "no exemplars shown (zero-shot)" in _report(zero)
    few = named_run(bench, "oracle", tmp_path, "fs", "--strategy", "few-shot:2", "--limit", "2")
    assert "exemplars came from split 'dev', not the evaluated split 'test'" in _report(few)
    own = _two_sources(tmp_path)  # a sample of a file, its exemplars from the same file
    same = named_run(own, "oracle", tmp_path, "same", "--strategy", "few-shot:2",
                     "--exemplars", own, "--sample", "4")  # fmt: skip
    assert "the split is not isolated" in _report(same)


def _two_sources(tmp_path: Path) -> str:
    rows = [{"id": f"{source}{n}", "question": f"Q {source}{n}?", "kind": "choice",
             "options": {"A": "x", "B": "y"}, "answer": "A" if source == "easy" else "B",
             "meta": {"source": source}}
            for source in ("easy", "hard", "tiny") for n in range(60 if source != "tiny" else 10)]  # fmt: skip
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"jsonl:{path}"


def test_sources_near_the_ceiling_are_flagged_in_reports_and_boards(tmp_path: Path) -> None:
    run = named_run(_two_sources(tmp_path), "first", tmp_path / "runs", "first")
    text = _report(run)
    assert "source 'easy' scores 100.0% (n=60): near the ceiling" in text
    assert "'hard'" not in text.split("near the ceiling")[0].rsplit("\n", 1)[-1]
    board = CliRunner().invoke(app, ["board", str(run), "--json"])
    flagged = json.loads(board.stdout)["near_ceiling"]
    assert flagged == [
        "first: source 'easy' scores 100.0% (n=60): near the ceiling, as "
        "memorised items would; check it for contamination before reading it as skill"
    ]
    shown = CliRunner().invoke(app, ["board", str(run)])
    assert "source 'easy' scores 100.0%" in shown.output


def test_the_ceiling_needs_n_50_and_98_percent() -> None:
    cells = {"a": {"score": 0.98, "n": 50}, "b": {"score": 0.979, "n": 500},
             "c": {"score": 1.0, "n": 49}, "d": {"score": None, "n": 80}}  # fmt: skip
    assert [note.split("'")[1] for note in near_ceiling(cells)] == ["a"]


def test_a_refused_run_option_changes_nothing(tmp_path: Path) -> None:
    result = invoke_run("demo", "first", tmp_path, "x", "--model-info", "vendor=acme")
    assert result.exit_code == 2 and not (tmp_path / "x").exists()


def test_the_oracle_which_reads_the_gold_is_never_flagged(tmp_path: Path) -> None:
    run = named_run(_two_sources(tmp_path), "oracle", tmp_path / "runs", "oracle")
    assert "near the ceiling" not in _report(run)
    board = CliRunner().invoke(app, ["board", str(run), "--json"])
    assert "near_ceiling" not in json.loads(board.stdout)
