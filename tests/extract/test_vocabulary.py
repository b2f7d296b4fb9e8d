"""Vocabularies as data (``extract.vocabulary``): the package's files, their validation, the
``medlens vocab`` listing and a user's ``--vocab FILE`` (run.json records it; the verdict and the
report name what the vocabulary decided)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from medlens.cli import app
from medlens.core.errors import InputError
from medlens.extract.assertion import asserts_gold
from medlens.extract.vocabulary import AXES, NARROWER, builtin_files, load_vocabulary
from real_items import real_item

HEADER = "# vocabulary: organ\n# version: 3\ncanonical\tterm\tsource\n"


def test_every_axis_is_a_versioned_file_whose_entries_cite_a_source() -> None:
    files = builtin_files()
    assert [f.axis for f in files] == [*AXES, *NARROWER]
    assert [f.relation for f in files] == ["same"] * len(AXES) + ["narrower"] * len(NARROWER)
    assert {"modality", "plane", "sex", "body_region", "organ", "laterality", "mr_sequence",
            "number_words", "finding"} == set(AXES)  # fmt: skip
    for file in files:
        assert file.version and file.entries
        assert all(entry.source.strip() for entry in file.entries)
    cited = [e.source for f in files for e in f.entries]
    assert any("RadLex" in s for s in cited) and any("SNOMED CT" in s for s in cited)
    assert any("UMLS" in s for s in cited)


@pytest.mark.parametrize(
    ("body", "line", "problem"),
    [
        ("Liver\thepatic organ\tmine\nLiver\thepatic organ\tmine\n", 5, "listed twice"),
        ("Liver\tcolon\tmine\n", 4, "maps to 'Liver' and to 'Large Bowel'"),
        ("Liver\tonly two fields\n", 4, "expected canonical<TAB>term<TAB>source"),
        ("CT\tmy ct\tmine\n", 4, "canonical 'CT' already means 'CT' on modality"),
    ],
)
def test_a_bad_vocabulary_file_is_one_line_naming_file_and_line(
    tmp_path: Path, body: str, line: int, problem: str
) -> None:
    path = tmp_path / "mine.tsv"
    path.write_text(HEADER + body, "utf-8")
    with pytest.raises(InputError) as caught:
        load_vocabulary((str(path),))
    assert caught.value.where == f"line {line}" and problem in caught.value.problem
    result = CliRunner().invoke(app, ["vocab", "--vocab", str(path)])
    assert result.exit_code == 2
    assert f"{path}, line {line}:" in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_vocab_lists_axes_and_one_axis_with_sources() -> None:
    listed = CliRunner().invoke(app, ["vocab", "--json"])
    assert listed.exit_code == 0
    assert [row["axis"] for row in json.loads(listed.stdout)] == [*AXES, *NARROWER]
    plane = CliRunner().invoke(app, ["vocab", "plane", "--json"])
    rows = json.loads(plane.stdout)
    assert {"canonical": "Transverse Plane", "term": "axial"} in [
        {"canonical": r["canonical"], "term": r["term"]} for r in rows
    ]
    unknown = CliRunner().invoke(app, ["vocab", "planes"])
    assert unknown.exit_code == 2 and "known: body_region" in unknown.output


NARROWER_HEADER = "# vocabulary: organ\n# relation: narrower\ncanonical\tterm\tsource\n"


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("Thyroid\tthyroid lobe\tmine\n", "'Thyroid' is no concept of organ"),
        ("Intestines\tbowel\tmine\n", "'bowel' is already a name of 'Intestines'"),
        ("Intestines\tcaecum\tmine\nIntestines\tcaecum\tmine\n", "already a name"),
    ],
)
def test_a_narrower_term_needs_a_concept_and_is_no_name_of_it(
    tmp_path: Path, body: str, problem: str
) -> None:
    path = tmp_path / "narrower.tsv"
    path.write_text(NARROWER_HEADER + body, "utf-8")
    with pytest.raises(InputError) as caught:
        load_vocabulary((str(path),))
    assert problem in caught.value.problem
    (tmp_path / "odd.tsv").write_text("# vocabulary: organ\n# relation: broader\n", "utf-8")
    with pytest.raises(InputError, match="relation must be same or narrower"):
        load_vocabulary((str(tmp_path / "odd.tsv"),))


@pytest.mark.parametrize(
    ("gold", "said", "credited"),
    [
        ("mri", "flair", True),  # FLAIR is an MRI (VQA-RAD, real output)
        ("flair", "mri", False),  # an MRI need not be FLAIR
        ("intestines", "large bowel", True),  # the large bowel is intestine
        ("large bowel", "intestines", False),
        ("coronal", "pa", True),  # a PA film is a coronal (frontal) projection
        ("pa", "coronal", False),
        ("diaphragm", "right and left hemidiaphragms", True),
        ("xr", "xray", True),
        ("adipose tissue", "fat", True),
    ],
)
def test_a_narrower_term_asserts_its_concept_and_not_the_reverse(
    gold: str, said: str, credited: bool
) -> None:
    assert asserts_gold(said, gold).credited is credited


def test_a_user_vocabulary_decides_verdicts_is_recorded_and_counted(tmp_path: Path) -> None:
    """A SLAKE answer in a user's own words: right only with the user's file, which run.json
    records; the verdict names the entry and the report counts the item."""
    mine = tmp_path / "mine.tsv"
    mine.write_text("# vocabulary: modality\n# version: 2\ncanonical\tterm\tsource\n"
                    "CT\tcat scanner image\tlocal usage\n", "utf-8")  # fmt: skip
    replay = tmp_path / "answers.jsonl"
    replay.write_text(json.dumps({"index": "11934", "answer": "A cat scanner image."}) + "\n")
    bench = f"jsonl:{tmp_path / 'bench.jsonl'}"
    question = real_item("slake", "11934")  # "What modality is used to take this image?" CT
    (tmp_path / "bench.jsonl").write_text(json.dumps(
        {"id": question.id, "question": question.question, "answer": question.answer,
         "kind": "open"}) + "\n")  # fmt: skip
    runs = tmp_path / "runs"
    plain = invoke_run(bench, f"replay:{replay}", runs, "plain")
    assert plain.exit_code == 0, plain.output
    assert json.loads((runs / "plain" / "results.json").read_text())["overall"]["score"] == 0.0
    used = invoke_run(bench, f"replay:{replay}", runs, "mine", "--vocab", str(mine))
    assert used.exit_code == 0, used.output
    run = json.loads((runs / "mine" / "run.json").read_text())
    assert run["spec"]["vocab"][0]["path"] == str(mine)
    assert run["spec"]["vocab"][0]["version"] == "2" and run["spec"]["vocab"][0]["sha256"]
    record = json.loads((runs / "mine" / "records.jsonl").read_text().splitlines()[0])
    assert record["score"] == 1.0
    assert record["extraction"]["method"] == "free_text:vocab:modality:cat scanner image"
    results = json.loads((runs / "mine" / "results.json").read_text())
    assert results["counts"]["vocabulary"] == 1
    report = CliRunner().invoke(app, ["report", str(runs / "mine")])
    assert "decided by a vocabulary entry" in report.output


def test_a_bad_vocab_file_refuses_the_run_and_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.tsv"
    bad.write_text(HEADER + "Liver\tcolon\tmine\n", "utf-8")
    runs = tmp_path / "runs"
    result = invoke_run("demo", "random", runs, "x", "--vocab", str(bad))
    assert result.exit_code == 2 and f"{bad}, line 4:" in result.output
    assert not (runs / "x").exists()
