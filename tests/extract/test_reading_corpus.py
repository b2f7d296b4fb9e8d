"""The real-output reading corpus as a regression suite (issue 42): every corpus file replayed
through medlens's reading keeps its committed agreement with the careful reader (no file more
than half a point below ``tests/reading_corpus/figures.json``), every line keeps the format and
every sidecar a redistributable licence and its provenance. The harness itself is checked on
small corpora written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import cohen_kappa_score

from medlens.core.errors import InputError
from medlens.scoring import reader_agreement
from medlens.scoring.reader_agreement import Figures, figure_drops, figures, replay
from medlens.scoring.reading_corpus import load_corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "reading_corpus"


def test_every_corpus_file_keeps_its_committed_agreement() -> None:
    """The guard: `make test` fails when a reading change drops any file's agreement."""
    try:
        files = load_corpus(CORPUS)
    except InputError as error:
        pytest.fail(str(error), pytrace=False)
    committed = _committed()
    current = {f.name: figures(f.lines, [replay(line) for line in f.lines]) for f in files}
    problems = figure_drops(current, committed)
    if problems:
        hint = "\n(bench/reading_corpus.py prints the disagreements; --write-figures commits)"
        pytest.fail("\n".join(f"{name} {why}" for name, why in problems) + hint, pytrace=False)


def _committed() -> dict[str, Any]:
    path = CORPUS / "figures.json"
    if not path.exists():
        return {"files": {}}
    data: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return data


SIDECAR = {
    "repository": "someone/outputs", "path": "results/llava_vqarad.json",
    "commit": "0123456789abcdef0123456789abcdef01234567", "licence": "MIT",
    "licence_file": "LICENSE", "model": "llava-v1.5-7b", "dataset": "vqa-rad", "split": "test",
    "generation": "", "selection": "all", "read_by": "read one by one",
}  # fmt: skip


def _line(**changes: Any) -> dict[str, Any]:
    line = {
        "id": "vqa-rad:1", "kind": "yes_no", "question": "Is there a fracture?", "options": {},
        "gold": "no", "output": "No, the bones are intact.", "finish_reason": None,
        "reader": {"answer": "no", "credited": True, "class": "verbose", "note": ""},
        "verdict_by": "read",
    }  # fmt: skip
    line.update(changes)
    return line


def _write(root: Path, name: str, lines: list[dict[str, Any]], **sidecar: Any) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    side = path.with_name(path.name.removesuffix(".jsonl") + ".source.json")
    side.write_text(json.dumps({**SIDECAR, **sidecar}), "utf-8")
    return path


MCQ = {"A": "Pneumonia", "B": "Asthma", "C": "Increased ventricular wall stiffness"}


def _small_corpus(root: Path) -> None:
    _write(root, "vqa-rad/m__src.jsonl", [
        _line(),
        _line(output="Yes.", reader={"answer": "yes", "credited": False, "class": "short"}),
        _line(output="I cannot see the image.",
              reader={"answer": None, "credited": False, "class": "refusal"}),
        _line(kind="open", question="What organ is shown?", gold="liver",
              output="This is the liver.",
              reader={"answer": "liver", "credited": True, "class": "verbose"}),
        _line(kind="open", question="What organ is shown?", gold="liver",
              output="It could be the liver or the spleen.",
              reader={"answer": None, "credited": False, "class": "list_or_hedge"}),
    ])  # fmt: skip
    _write(root, "medqa/m__src.jsonl", [
        _line(kind="choice", options=MCQ, gold="C", output="The answer is C.",
              reader={"answer": "C", "credited": True, "class": "short"}),
        _line(kind="choice", options=MCQ, gold="C", output="B",
              reader={"answer": "B", "credited": False, "class": "letter_only"}),
    ])  # fmt: skip


def test_agreement_kappa_and_scores_of_a_small_corpus(tmp_path: Path) -> None:
    _small_corpus(tmp_path)
    files = {f.name: f for f in load_corpus(tmp_path)}
    vqa = files["vqa-rad/m__src.jsonl"]
    verdicts = [replay(line) for line in vqa.lines]
    assert [v.agrees for v in verdicts] == [True, True, True, True, True]
    found = figures(vqa.lines, verdicts)
    assert (found.n, found.agreement) == (5, 1.0)
    assert found.reader_score == pytest.approx(2 / 5)  # "No, …" and "This is the liver."
    assert found.medlens_score == pytest.approx(2 / 5)
    # κ is sklearn's over the labels (answers, None as a label; open lines on credit)
    theirs = [reader_agreement.reader_label(line) for line in vqa.lines]
    ours = [reader_agreement.label(line, v) for line, v in zip(vqa.lines, verdicts, strict=True)]
    assert found.kappa == pytest.approx(cohen_kappa_score(theirs, ours))


def test_a_disagreement_counts_and_none_agrees_with_none(tmp_path: Path) -> None:
    _write(tmp_path, "medqa/m__src.jsonl", [
        _line(kind="choice", options=MCQ, gold="C", output="A or B, hard to say.",
              reader={"answer": None, "credited": False, "class": "list_or_hedge"}),
        _line(kind="choice", options=MCQ, gold="C", output="The answer is C.",
              reader={"answer": "B", "credited": False, "class": "short"}),
    ])  # fmt: skip
    (only,) = load_corpus(tmp_path)
    verdicts = [replay(line) for line in only.lines]
    assert [v.agrees for v in verdicts] == [True, False]
    assert figures(only.lines, verdicts).agreement == 0.5


def test_pubmedqa_yes_no_lines_are_read_three_way(tmp_path: Path) -> None:
    _write(tmp_path, "pubmedqa/m__src.jsonl", [
        _line(question="Does X improve Y?", gold="maybe", output="Maybe.",
              reader={"answer": "maybe", "credited": True, "class": "short"}),
    ])  # fmt: skip
    (only,) = load_corpus(tmp_path)
    assert replay(only.lines[0]).answer == "maybe"
    assert reader_agreement.group_of(only.lines[0]) == "PubMedQA"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"kind": "essay"}, "field 'kind'"),
        ({"reader": {"answer": "no", "class": "verbose"}}, "field 'reader.credited'"),
        ({"reader": {"answer": "no", "credited": True, "class": "odd"}}, "field 'reader.class'"),
        ({"kind": "choice", "options": MCQ, "gold": "E"}, "field 'gold'"),
        ({"kind": "choice", "options": {}, "gold": "A"}, "field 'options'"),
        ({"verdict_by": "medlens"}, "field 'verdict_by'"),
        ({"output": 3}, "field 'output'"),
        ({"id": ""}, "field 'id'"),
        ({"reader": {"answer": "yes", "credited": True, "class": "short"}}, "field 'reader'"),
    ],
)
def test_a_line_that_breaks_the_format_is_named_with_its_field(
    tmp_path: Path, change: dict[str, Any], field: str
) -> None:
    path = _write(tmp_path, "slake/m__src.jsonl", [_line(), _line(**change)])
    with pytest.raises(InputError) as raised:
        load_corpus(tmp_path)
    assert str(raised.value).startswith(f"{path}, line 2, {field}: ")
    assert "\n" not in str(raised.value)


def test_a_line_that_is_not_json_is_named(tmp_path: Path) -> None:
    path = _write(tmp_path, "slake/m__src.jsonl", [_line()])
    path.write_text(path.read_text("utf-8") + '{"id": \n', "utf-8")
    with pytest.raises(InputError, match=r"m__src\.jsonl, line 2: not JSON"):
        load_corpus(tmp_path)


@pytest.mark.parametrize(
    ("sidecar", "problem"),
    [
        ({"licence": "CC-BY-NC-4.0"}, "field 'licence'"),
        ({"licence": "GPL-3.0"}, "field 'licence'"),
        ({"commit": "main"}, "field 'commit'"),
        ({"repository": ""}, "field 'repository'"),
        ({"path": None}, "field 'path'"),
    ],
)
def test_a_sidecar_needs_a_redistributable_licence_and_its_provenance(
    tmp_path: Path, sidecar: dict[str, Any], problem: str
) -> None:
    _write(tmp_path, "slake/m__src.jsonl", [_line()], **sidecar)
    with pytest.raises(InputError, match=rf"m__src\.source\.json, {problem}: "):
        load_corpus(tmp_path)


def test_a_file_without_its_sidecar_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "slake/m__src.jsonl", [_line()])
    path.with_name("m__src.source.json").unlink()
    with pytest.raises(InputError, match=r"m__src\.source\.json: missing"):
        load_corpus(tmp_path)


def _figures(agreement: float, n: int = 200) -> Figures:
    return Figures(n, agreement, None, 0.5, 0.5)


def test_a_drop_of_more_than_half_a_point_fails_and_a_smaller_one_passes() -> None:
    committed = {"files": {"a.jsonl": {"n": 200, "agreement": 0.97}}}
    assert figure_drops({"a.jsonl": _figures(0.966)}, committed) == []
    assert figure_drops({"a.jsonl": _figures(0.99)}, committed) == []
    (problem,) = figure_drops({"a.jsonl": _figures(0.964)}, committed)
    assert problem == ("a.jsonl", "agreement 0.9640, committed 0.9700")


def test_a_file_without_a_figure_another_n_or_a_gone_file_fails() -> None:
    committed = {"files": {"a.jsonl": {"n": 200, "agreement": 0.97}, "gone.jsonl": {"n": 3}}}
    problems = dict(
        figure_drops({"a.jsonl": _figures(0.97, 201), "b.jsonl": _figures(1)}, committed)
    )
    assert problems == {
        "a.jsonl": "has 201 lines, its committed figure 200",
        "b.jsonl": "has no committed figure",
        "gone.jsonl": "is committed but gone",
    }


def test_the_bench_prints_figures_and_writes_them_refusing_a_drop(tmp_path: Path) -> None:
    _small_corpus(tmp_path)
    bench = [sys.executable, str(ROOT / "bench" / "reading_corpus.py"), "--corpus", str(tmp_path)]
    shown = subprocess.run([*bench, "--write-figures"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "medqa/m__src.jsonl" in shown.stdout and "[pooled]" in shown.stdout
    written = json.loads((tmp_path / "figures.json").read_text("utf-8"))
    assert written["files"]["medqa/m__src.jsonl"] == {"n": 2, "agreement": 1.0, "kappa": 1.0}
    assert set(written["groups"]) == {"open/yes-no VQA", "MCQ"}
    # a verdict changed so that medlens now disagrees: the figure is not lowered silently
    _write(tmp_path, "medqa/m__src.jsonl", [
        _line(kind="choice", options=MCQ, gold="C", output="The answer is C.",
              reader={"answer": "A", "credited": False, "class": "short"}),
        _line(kind="choice", options=MCQ, gold="C", output="B",
              reader={"answer": "B", "credited": False, "class": "letter_only"}),
    ])  # fmt: skip
    refused = subprocess.run([*bench, "--write-figures"], capture_output=True, text=True)
    assert refused.returncode != 0
    assert "medqa/m__src.jsonl: agreement 0.5000, committed 1.0000" in refused.stderr
    assert json.loads((tmp_path / "figures.json").read_text("utf-8")) == written
    assert "answer_phrase: 1" in refused.stdout  # the disagreement, by medlens rule
