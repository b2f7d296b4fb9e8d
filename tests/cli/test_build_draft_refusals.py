"""Bad review and pick sheets, and bad drafting options: one line naming the file, row and field,
exit 2, nothing written."""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from draft_fixtures import invoke, slake_organ_labels, spec
from draft_server import draft_reply
from loopback_server import LoopbackServer, ServerConfig, serve

Rows = list[dict[str, str]]


@pytest.fixture(scope="module")
def server() -> Iterator[LoopbackServer]:
    with serve(ServerConfig(reply=draft_reply)) as running:
        yield running


def read(sheet: Path) -> Rows:
    with open(sheet, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write(sheet: Path, rows: Rows) -> None:
    with open(sheet, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def refused(args: list[str], where: str, problem: str, tmp_path: Path) -> None:
    before = sorted(p.name for p in tmp_path.rglob("*"))
    code, err = invoke(*args)
    lines = err.strip().splitlines()
    assert code == 2, err
    assert len(lines) == 1 and where in lines[0] and problem in lines[0], lines
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def drafted(tmp_path: Path, server: LoopbackServer, flag: str, models: str) -> Path:
    labels, root = slake_organ_labels(tmp_path)
    sheet = tmp_path / "sheet.csv"
    extra = ["--candidates", "4", "--options", "5"] if flag == "--distractors-from" else []
    code, err = invoke("build", str(labels), "--images", str(root), "--output", str(sheet), flag,
                       models, *extra)  # fmt: skip
    assert code == 0, err
    return sheet


def reviewed(rows: Rows) -> Rows:
    for row in rows:
        if row["row"] in ("1:identify", "1:describe"):
            row.update(decision="accept", reviewer="dr-a")
    return rows


def with_row(row_id: str, **cells: str) -> Callable[[Rows], Rows]:
    def change(rows: Rows) -> Rows:
        for row in reviewed(rows):
            if row["row"] == row_id:
                row.update(cells)
        return rows

    return change


def without_column(name: str) -> Callable[[Rows], Rows]:
    return lambda rows: [{k: v for k, v in r.items() if k != name} for r in reviewed(rows)]


REVIEW_CASES: dict[str, tuple[Callable[[Rows], Rows], str, str]] = {
    "unknown row": (with_row("2:describe", row="99:identify"), "row 6, column 'row'",
                    "'99:identify' is not a row of the draft"),
    "missing column": (without_column("decision"), "row 1, column 'decision'", "column missing"),
    "invalid decision": (with_row("2:describe", decision="maybe"), "row 6, column 'decision'",
                         "'maybe' is not a decision"),
    "accepted, empty question": (with_row("4:identify", decision="accept", reviewer="dr-b"),
                                 "row 11, column 'question'",
                                 "an accepted row with an empty question"),
    "question emptied": (with_row("1:identify", question=""), "row 2, column 'question'",
                         "an accepted row with an empty question"),
    "no reviewer": (with_row("1:identify", reviewer=""), "row 2, column 'reviewer'",
                    "an accepted row needs a reviewer"),
    "edited answer not an option": (
        with_row("2:describe", decision="edit", edited_answer="above", reviewer="dr-a"),
        "row 6, column 'options'", "the answer 'above' is not one of the options"),
    "edit without edits": (with_row("2:describe", decision="edit", reviewer="dr-a"),
                           "row 6, column 'decision'", "edited_question, edited_options"),
    "another draft": (with_row("1:identify", draft="0123456789ab"), "row 2, column 'draft'",
                      "not from the draft"),
    "nothing accepted": (lambda rows: rows, "sheet.csv", "no accepted or edited row"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(REVIEW_CASES))
def test_bad_review_sheets_are_refused(case: str, tmp_path: Path, server: LoopbackServer) -> None:
    change, where, problem = REVIEW_CASES[case]
    sheet = drafted(tmp_path, server, "--draft-with", spec(server))
    write(sheet, change(read(sheet)))
    output = tmp_path / "out" / "items.jsonl"
    refused(["build-from-review", str(sheet), "--output", str(output)], where, problem, tmp_path)


def test_a_review_sheet_without_its_draft_record_is_refused(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sheet = drafted(tmp_path, server, "--draft-with", spec(server))
    write(sheet, reviewed(read(sheet)))
    moved = tmp_path / "elsewhere.csv"
    shutil.move(sheet, moved)
    refused(["build-from-review", str(moved), "--output", str(tmp_path / "o.jsonl")],
            "elsewhere.draft.json", "no such draft record", tmp_path)  # fmt: skip


MODELS = "llm-a,llm-b,llm-c"


def all_picked(rows: Rows) -> Rows:
    """Every annotator picks the first four candidates of every item."""
    seen: dict[str, int] = {}
    for row in rows:
        if row["role"] == "candidate":
            seen[row["item"]] = seen.get(row["item"], 0) + 1
            if seen[row["item"]] <= 4:
                row.update(pick_1="x", pick_2="x", pick_3="x")
    return rows


def pick_row(at: str, which: str, **cells: str) -> Callable[[Rows], Rows]:
    """The rows all picked, then the row of item `at` and candidate `which` changed."""

    def change(rows: Rows) -> Rows:
        for row in all_picked(rows):
            if row["item"] == at and row["candidate"] == which:
                row.update(cells)
        return rows

    return change


PICK_CASES: dict[str, tuple[Callable[[Rows], Rows], str, str]] = {
    "candidate is the gold": (pick_row("5", "c1", option="liver"), "row 23, column 'option'",
                              "candidate 'liver' is the gold answer"),
    "annotator picks the gold": (pick_row("5", "gold", pick_2="x"), "row 22, column 'pick_2'",
                                 "the gold answer is marked"),
    "unknown item": (pick_row("5", "c2", item="77"), "row 24, column 'item'",
                     "'77' is not an item of the draft"),
    "unknown candidate": (pick_row("5", "c2", candidate="c9"), "row 24, column 'candidate'",
                          "'c9' is not a candidate of item '5'"),
    "fewer picks than needed": (pick_row("5", "c1", pick_1=""), "item '5', column 'pick_1'",
                                "3 picks by pick_1, 4 needed"),
    "not a pick": (pick_row("5", "c1", pick_3="maybe"), "row 23, column 'pick_3'",
                   "'maybe' is not a pick"),
    "candidate text changed": (pick_row("5", "c1", option="Kidney"), "row 23, column 'option'",
                               "candidate text changed"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(PICK_CASES))
def test_bad_pick_sheets_are_refused(case: str, tmp_path: Path, server: LoopbackServer) -> None:
    change, where, problem = PICK_CASES[case]
    models = ",".join(spec(server, m) for m in MODELS.split(","))
    sheet = drafted(tmp_path, server, "--distractors-from", models)
    write(sheet, change(read(sheet)))
    output = tmp_path / "out" / "items.jsonl"
    refused(["build-from-picks", str(sheet), "--output", str(output)], where, problem, tmp_path)


def test_one_annotator_column_filled_in_two_files_is_refused(
    tmp_path: Path, server: LoopbackServer
) -> None:
    models = ",".join(spec(server, m) for m in MODELS.split(","))
    sheet = drafted(tmp_path, server, "--distractors-from", models)
    write(sheet, all_picked(read(sheet)))
    copy = tmp_path / "copy.csv"
    shutil.copy(sheet, copy)
    refused(["build-from-picks", str(sheet), str(copy), "--output", str(tmp_path / "o.jsonl")],
            "copy.csv, row 1, column 'pick_1'", "is filled in", tmp_path)  # fmt: skip


def test_drafting_options_are_checked_before_any_request(tmp_path: Path) -> None:
    labels, root = slake_organ_labels(tmp_path)
    sheet = tmp_path / "s.xlsx"
    base = ["build", str(labels), "--images", str(root), "--output", str(sheet)]
    model = "openai:m?base_url=http://127.0.0.1:9/v1"
    templates = tmp_path / "t.toml"
    templates.write_text('[dimensions.x]\nprompt = "Ask about {organ}"\n')
    for extra, where, problem in [
        (["--draft-with", model, "--granularity", "box"], "--draft-with",
         "use --granularity image"),
        (["--draft-with", model, "--dimensions", "identify,smell"], "--dimensions 'smell'",
         "no such template"),
        (["--draft-with", model, "--draft-templates", str(templates)],
         "t.toml, dimensions.x, field 'prompt'", "unknown placeholder"),
        (["--draft-with", model, "--distractors-from", model], "--draft-with",
         "give one of them"),
        (["--distractors-from", model, "--candidates", "0"], "--candidates 0", "expected"),
        (["--draft-with", model, "--template", "full"], "--draft-with writes a sheet",
         "--template would do nothing"),
    ]:  # fmt: skip
        refused([*base, *extra], where, problem, tmp_path)
    sheet.write_text("keep me")
    refused([*base, "--draft-with", model], "s.xlsx exists", "--force", tmp_path)
    assert sheet.read_text() == "keep me"


def test_a_model_that_answers_nothing_writes_nothing(tmp_path: Path) -> None:
    labels, root = slake_organ_labels(tmp_path)
    dead = "openai:m?base_url=http://127.0.0.1:9/v1&max_retries=0&backoff=0&connect_timeout=2"
    refused(["build", str(labels), "--images", str(root), "--output", str(tmp_path / "s.csv"),
             "--draft-with", dead], "127.0.0.1:9", "cannot connect", tmp_path)  # fmt: skip
    assert not json.dumps([p.name for p in tmp_path.iterdir()]).count("draft.json")


def test_the_same_model_twice_among_distractor_models_is_refused(
    tmp_path: Path, server: LoopbackServer
) -> None:
    labels, root = slake_organ_labels(tmp_path)
    models = ",".join(spec(server, m) for m in ("llm-a", "llm-a"))
    refused(["build", str(labels), "--images", str(root), "--output", str(tmp_path / "p.csv"),
             "--distractors-from", models], "--distractors-from",
            "names the model openai:llm-a twice",
            tmp_path)  # fmt: skip


def test_distractor_specs_split_at_commas_before_a_spec_name_only() -> None:
    from medlens.cli.build_draft import distractor_specs

    text = 'openai:a?base_url=http://x/v1&extra_body={"n":1,"m":2}, openai:b?base_url=http://y/v1'
    assert [s.argument for s in distractor_specs(text)] == ["a", "b"]
    assert distractor_specs(text)[0].options["extra_body"] == '{"n":1,"m":2}'


def test_an_unreadable_image_is_refused_before_any_request(
    tmp_path: Path, server: LoopbackServer
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.png").write_bytes(b"not a picture")
    labels = root / "labels.csv"
    labels.write_text("image,label\na.png,liver\n", encoding="utf-8")
    asked = server.stats["requests"]
    refused(["build", str(labels), "--output", str(tmp_path / "s.csv"), "--draft-with",
             spec(server)], "labels.csv, row 1, field 'image'", "a.png", tmp_path)  # fmt: skip
    assert server.stats["requests"] == asked
