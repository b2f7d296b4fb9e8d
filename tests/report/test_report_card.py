"""The protocol card in every report format, the non-official marker, citations, access note."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from gmai_fixture import write_gmai_tsv
from medlens.cli import app
from medlens.report import render
from medlens.report.card import protocol_card
from provenance_fixture import write_choice_benchmark

VLMEVAL_TAIL = "Please select the correct answer from the options above. \n"


@pytest.fixture(scope="module")
def gmai_tsv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gmai") / "GMAI_VAL.tsv"
    write_gmai_tsv(path, n_rows=12)
    return path


def test_gmai_with_the_vlmeval_protocol_is_official(gmai_tsv: Path, tmp_path: Path) -> None:
    run = named_run(
        f"gmai:{gmai_tsv}",
        "first",
        tmp_path,
        "official",
        "--prompt",
        "vlmeval",
        "--extract",
        "vlmeval",
    )
    card = protocol_card(run)
    assert card.official is True
    assert card.marker.startswith("protocol: official")
    templates = dict(card.templates)
    assert templates["choice"].endswith(VLMEVAL_TAIL)
    assert "Question: {question}\nOptions:\nA. {A}\n" in templates["choice"]
    rows = dict(card.rows)
    assert rows["prompt style"] == "vlmeval" and rows["extraction"] == "vlmeval"
    assert (
        rows["content hash"]
        == json.loads((run / "run.json").read_text())["spec"]["benchmark"]["content_hash"]
    )
    assert (
        card.citations[0][1]
        == "inherits the licences of its 284 source datasets; no single licence"
    )


def test_gmai_with_the_medlens_prompt_is_marked_non_official(
    gmai_tsv: Path, tmp_path: Path
) -> None:
    run = named_run(f"gmai:{gmai_tsv}", "first", tmp_path, "ours", "--limit", "6")
    card = protocol_card(run)
    assert card.official is False
    assert card.marker == (
        "NON-OFFICIAL PROTOCOL: prompt 'medlens' (official: 'vlmeval'); extract 'medlens' "
        "(official: 'vlmeval'); only 6 of 12 items answered"
    )
    assert "Answer with the letter of the single correct option" in dict(card.templates)["choice"]
    md = render(run, "md")
    assert isinstance(md, str)
    assert "## Protocol\n" in md and "NON-OFFICIAL PROTOCOL" in md
    assert "## Citations and usage" in md and "@inproceedings{chen2024gmaimmbench," in md
    assert md.rstrip().endswith("Use each dataset under its own licence and cite it.")
    html = render(run, "html")
    assert isinstance(html, str)
    assert '<p class="protocol-non-official"><strong>NON-OFFICIAL PROTOCOL' in html
    assert "<h2>Citations and usage</h2>" in html
    text = render(run, "text")
    assert "protocol card\nNON-OFFICIAL PROTOCOL" in text and "environment: packages: numpy" in text
    book = load_workbook(io.BytesIO(render(run, "xlsx")))  # type: ignore[arg-type]
    sheet = {row[0]: row[1] for row in book["protocol"].iter_rows(values_only=True)}
    assert str(sheet["protocol"]).startswith("NON-OFFICIAL PROTOCOL")
    assert sheet["licence (gmai)"].startswith("inherits the licences")
    assert str(sheet["usage"]).startswith("These results come from an automated benchmark")


def test_other_benchmarks_have_no_official_protocol_and_user_data_cites_nothing(
    tmp_path: Path,
) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 4)
    run = named_run(f"jsonl:{bench}", "first", tmp_path / "runs", "r", "--seed", "3")
    card = protocol_card(run)
    assert card.official is None
    assert dict(card.rows)["seed"] == "3"
    assert card.citations == (("jsonl", card.citations[0][1], ""),)


def test_judges_beside_the_records_appear_on_the_card(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "data", 4)
    run = named_run(f"jsonl:{bench}", "first", tmp_path / "runs", "r")
    folder = run / "judges" / "rubric-4o"
    folder.mkdir(parents=True)
    judge = {"schema": 1, "name": "rubric-4o", "judge": "openai:gpt-4o",
             "protocol": {"name": "rubric", "dimensions": ["consistency", "coherence"],
                          "weights": {"consistency": 1.0, "coherence": 4.0}, "template_sha256": "x"},
             "scope": "all", "repeats": 1, "created": "2026-01-01T00:00:00+00:00"}  # fmt: skip
    (folder / "judge.json").write_text(json.dumps(judge))
    rows = dict(protocol_card(run).rows)
    assert (
        rows["judges"] == "rubric-4o: rubric by openai:gpt-4o (weights consistency 1, coherence 4)"
    )


def test_a_run_on_a_restricted_source_prints_its_access_note_once(
    gmai_tsv: Path, tmp_path: Path
) -> None:
    first = invoke_run(f"gmai:{gmai_tsv}", "first", tmp_path, "g", "--limit", "3")
    assert first.exit_code == 0, first.output
    assert first.output.count("access: GMAI-MMBench inherits the licences") == 1
    again = CliRunner().invoke(
        app, ["run", "--bench", f"gmai:{gmai_tsv}", "--model", "first", "--out", str(tmp_path),
              "--name", "g"],
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "access:" not in again.output
    bench = write_choice_benchmark(tmp_path / "data", 3)
    open_run = invoke_run(f"jsonl:{bench}", "first", tmp_path, "open")
    assert "access:" not in open_run.output
