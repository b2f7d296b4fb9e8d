"""GMAI-MMBench's own vocabulary shipped as data: `check` names axis values outside it (with the
closest known value) and near-duplicates; a user's vocabulary file is checked for duplicates;
the lexical tree's levels expand in `slice --by tree:LEVEL`."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import named_run
from gmai_fixture import write_gmai_tsv
from medlens.checks.vocabulary import (
    expand_levels,
    near_duplicates,
    shipped_vocabulary,
    vocabulary_check,
)
from medlens.cli import app


def test_the_gmai_vocabulary_ships_18_tasks_and_18_departments() -> None:
    vocabulary = shipped_vocabulary("gmai")
    assert vocabulary is not None
    assert len(vocabulary.axes["task"]) == 18 and len(vocabulary.axes["department"]) == 18
    assert "Otolaryngology (ENT)/Head and Neck Surgery" in vocabulary.axes["department"]
    assert vocabulary.tree["l2-category"] == "category"
    assert shipped_vocabulary("slake") is None


def test_values_outside_and_near_duplicates_are_named() -> None:
    vocabulary = shipped_vocabulary("gmai")
    assert vocabulary is not None
    axes = {
        "department": Counter({"Dermatology": 40, "Dermatolgy": 3, "Urology": 9, "Radiology": 5}),
        "task": Counter({"Disease Diagnosis": 12, "disease diagnosis ": 1}),
    }
    result = vocabulary_check(axes, vocabulary)
    assert result.status == "warn"
    text = "\n".join(result.details)
    assert (
        "department: 'Dermatolgy' (n=3) is not in the vocabulary; did you mean 'Dermatology'?"
        in text
    )
    assert "'Radiology' (n=5) is not in the vocabulary" in text
    assert "'Dermatolgy' and 'Dermatology' are near-duplicates" in text
    assert "Urology" not in text  # no far-fetched suggestion for Radiology
    assert "task" not in text  # a case/spacing variant of a known value is in the vocabulary
    clean = vocabulary_check({"department": Counter({"Urology": 3})}, vocabulary)
    assert clean.status == "pass"


def test_near_duplicates_leave_distinct_short_values_alone() -> None:
    assert near_duplicates(["Dermatology", "Dermatolgy", "Urology"]) == [
        ["Dermatolgy", "Dermatology"]
    ]
    assert near_duplicates(["CT", "MR", "T1", "T2"]) == []


def test_check_of_a_gmai_file_names_its_values_outside_the_vocabulary(tmp_path: Path) -> None:
    write_gmai_tsv(tmp_path / "val.tsv", n_rows=12)
    result = CliRunner().invoke(app, ["check", f"gmai:{tmp_path / 'val.tsv'}", "--json"])
    checks = {c["name"]: c for c in json.loads(result.stdout)["checks"]}
    vocabulary = checks["vocabulary"]
    assert vocabulary["status"] == "warn"
    outside = {row["value"] for row in vocabulary["data"]["outside"]["task"]}
    assert outside == {"Anatomical Structure Identification"}  # the fixture's own task name


def _bench(tmp_path: Path, departments: list[str]) -> str:
    rows = [{"id": f"q{n}", "question": "Which?", "kind": "choice", "options": {"A": "a", "B": "b"},
             "answer": "A", "meta": {"department": d}} for n, d in enumerate(departments)]  # fmt: skip
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return f"jsonl:{path}"


def test_a_users_vocabulary_file_applies_to_any_benchmark(tmp_path: Path) -> None:
    vocab = tmp_path / "vocab.json"
    vocab.write_text(json.dumps({"axes": {"department": ["Cardiology", "Neurology"]}}))
    bench = _bench(tmp_path, ["Cardiology", "Cardiolgy", "Neurology"])
    result = CliRunner().invoke(app, ["check", bench, "--vocabulary", str(vocab)])
    assert "did you mean 'Cardiology'?" in result.output


@pytest.mark.parametrize(
    ("content", "words"),
    [({"axes": {"department": ["Cardiology", "cardiology "]}}, "axes.department: duplicate value"),
     ({"axes": {"department": "Cardiology"}}, "expected a list of non-empty strings"),
     ({"values": []}, "field 'axes'")],
)  # fmt: skip
def test_a_bad_vocabulary_file_is_one_line_exit_2(
    tmp_path: Path, content: object, words: str
) -> None:
    vocab = tmp_path / "vocab.json"
    vocab.write_text(json.dumps(content))
    bench = _bench(tmp_path, ["Cardiology"])
    before = sorted(p.name for p in tmp_path.iterdir())
    result = CliRunner().invoke(app, ["check", bench, "--vocabulary", str(vocab)])
    assert result.exit_code == 2 and words in result.output and str(vocab) in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_tree_levels_expand_to_their_parents() -> None:
    assert expand_levels(["tree:l2-category"], ["category", "l2-category"]) == [
        "category",
        "l2-category",
    ]
    assert expand_levels(["tree:sub-modality", "task"], ["modality", "sub-modality", "task"]) == [
        "modality", "sub-modality", "task"]  # fmt: skip
    assert expand_levels(["tree:l2-category"], ["l2-category"]) == ["l2-category"]


def test_slice_by_a_tree_level_shows_the_parent_level_too(tmp_path: Path) -> None:
    write_gmai_tsv(tmp_path / "val.tsv", n_rows=12)
    run = named_run(f"gmai:{tmp_path / 'val.tsv'}", "oracle", tmp_path / "runs", "g")
    result = CliRunner().invoke(app, ["slice", str(run), "--by", "tree:l2-category", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert payload["by"] == ["category", "l2-category"]
    keyed = [c for c in payload["cells"] if set(c.get("key", {})) == {"category", "l2-category"}]
    assert {(c["key"]["category"], c["key"]["l2-category"]) for c in keyed} == {
        ("Anatomy", "Body region"), ("Multiple findings", "Statements")}  # fmt: skip
