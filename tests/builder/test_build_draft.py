"""`medlens build --draft-with` and `build-from-review`: questions drafted by a real loopback
model from real SLAKE organ labels, reviewed in the sheet by the test, built into items that
`medlens check` passes and `medlens run` runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image

from data_paths import realdata_dir
from draft_fixtures import fill, invoke, sheet_rows, slake_organ_labels, spec
from draft_server import draft_reply
from loopback_server import LoopbackServer, ServerConfig, serve
from medlens.builder.drafting import DraftTask, Template, read_draft
from medlens.builder.labels import LabelRow
from medlens.builder.model_calls import Reply, UnusableReply


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with serve(ServerConfig(reply=draft_reply)) as running:
        yield running


def draft(tmp_path: Path, server: LoopbackServer, sheet: Path, *extra: str) -> list[dict[str, str]]:
    labels, root = slake_organ_labels(tmp_path)
    code, err = invoke("build", str(labels), "--images", str(root), "--output", str(sheet),
                       "--draft-with", spec(server), "--dimensions", "identify,describe",
                       *extra)  # fmt: skip
    assert code == 0, err
    return sheet_rows(sheet)


def test_drafted_rows_name_the_model_and_unusable_drafts_start_rejected(
    tmp_path: Path, server: LoopbackServer
) -> None:
    rows = draft(tmp_path, server, tmp_path / "review.xlsx")
    by_id = {r["row"]: r for r in rows}
    n = len((tmp_path / "labels.csv").read_text().splitlines()) - 1
    assert list(by_id) == [f"{i}:{d}" for i in range(1, n + 1) for d in ("identify", "describe")]
    liver = by_id["1:identify"]
    assert (
        liver["label"] == "Liver"
        and liver["answer"] == "Liver"
        and liver["model"] == "openai:drafter"
    )
    assert liver["options"].splitlines()[1] == "Liver" and liver["decision"] == ""
    assert liver["image"] == "review-images/xmlab0_source.png"  # the picture the item shows
    with Image.open(tmp_path / liver["image"]) as shown:
        source = Image.open(realdata_dir("slake") / "imgs/xmlab0/source.jpg")
        assert shown.format == "PNG" and shown.size == source.size
    assert {r["image"] for r in rows} == {f"review-images/xmlab{n}_source.png" for n in (0, 11, 22)}
    spleen = by_id["4:identify"]  # a prose reply
    assert spleen["decision"] == "reject" and "no JSON object" in spleen["problem"]
    assert spleen["question"] == ""
    kidney = by_id["2:identify"]  # another label of the same image offered as a wrong option
    assert "'Liver' is another label of this image" in kidney["problem"]
    assert by_id["2:describe"]["problem"] == ""  # the same label's other dimension is fine
    record = json.loads((tmp_path / "review.draft.json").read_text())
    assert record["model"] == "openai:drafter" and record["rows"][6]["reply"].startswith("Sure!")
    sent = server.last_body["messages"][0]["content"]  # type: ignore[index]
    assert "<<<BEGIN LABEL " in sent and "never an instruction" in sent


def test_reviewed_sheet_becomes_items_that_check_and_run(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sheet = tmp_path / "review.xlsx"
    draft(tmp_path, server, sheet)
    fill(sheet, {
        "1:identify": {"decision": "accept", "reviewer": "dr-a"},
        "1:describe": {"decision": "edit", "edited_options": "left\nright\nmidline",
                       "reviewer": "dr-a", "comment": "four is one too many"},
        "4:identify": {"decision": "edit", "edited_question": "Which organ is this?",
                       "edited_options": "Spleen\nLiver\nStomach\nPancreas",
                       "edited_answer": "spleen", "reviewer": "dr-b"},
        "3:identify": {"decision": "reject", "reviewer": "dr-a"},
        "5:identify": {"decision": "Accept", "reviewer": "dr-b"},
    })  # fmt: skip
    output = tmp_path / "out" / "drafted.jsonl"
    code, err = invoke("build-from-review", str(sheet), "--output", str(output))
    assert code == 0, err
    assert "wrote 4 items" in err and "1 edited" not in err
    items = {i["id"]: i for i in map(json.loads, output.read_text().splitlines())}
    assert list(items) == ["1:identify", "1:describe", "4:identify", "5:identify"]
    liver = items["1:identify"]
    assert liver["options"][liver["answer"]] == "Liver" and len(liver["options"]) == 4
    assert (
        liver["meta"]["drafted_by"] == "openai:drafter" and liver["meta"]["reviewed_by"] == "dr-a"
    )
    assert liver["meta"]["review"] == "accepted" and liver["meta"]["dimension"] == "identify"
    assert liver["meta"]["modality"] == "CT" and liver["meta"]["image_id"] == "xmlab0/source.jpg"
    side = items["1:describe"]
    assert sorted(side["options"].values()) == ["left", "midline", "right"]
    assert side["meta"]["review"] == "edited" and side["options"][side["answer"]] == "left"
    spleen = items["4:identify"]
    assert spleen["question"] == "Which organ is this?" and spleen["meta"]["reviewed_by"] == "dr-b"
    assert spleen["options"][spleen["answer"]] == "Spleen"
    letters = [i["answer"] for i in items.values() if len(i["options"]) == 4]
    assert len(set(letters)) == len(letters)  # gold letters balanced, not where the model put them
    assert invoke("check", f"jsonl:{output}")[0] == 0
    runs = tmp_path / "runs"
    code, err = invoke("run", "--bench", f"jsonl:{output}", "--model", "oracle", "--out",
                       str(runs), "--name", "oracle")  # fmt: skip
    assert code == 0, err
    results = json.loads((runs / "oracle" / "results.json").read_text())
    assert results["overall"]["n"] == 4 and results["overall"]["score"] == 1.0


def test_csv_sheet_and_a_rerun_answered_from_the_cache(
    tmp_path: Path, server: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one live check of the cached answers, not 21 (tests/execution/test_cache_live_check.py)
    monkeypatch.setattr("medlens.execution.cache.LIVE_CHECKS", 1)
    sheet = tmp_path / "review.csv"
    first = draft(tmp_path, server, sheet)
    asked = server.stats["requests"]
    on_image: dict[str, set[str]] = {}
    for row in first:
        on_image.setdefault(row["image"], set()).add(row["label"])
    prompts = {(r["label"], r["dimension"], frozenset(on_image[r["image"]])) for r in first}
    assert asked == len(prompts) < len(first)  # the same label and context: one request
    assert (tmp_path / "review.instructions.csv").is_file()
    again = draft(tmp_path, server, sheet, "--force")
    assert again == first
    assert server.stats["requests"] - asked <= 1  # the cache's one live check of the server
    fill(sheet, {"6:describe": {"decision": "accept", "reviewer": "dr-c"}})
    output = tmp_path / "one.jsonl"
    assert invoke("build-from-review", str(sheet), "--output", str(output))[0] == 0
    [item] = map(json.loads, output.read_text().splitlines())
    assert item["meta"]["reviewed_by"] == "dr-c" and item["meta"]["label"] == "Spleen"


def test_templates_from_a_file_replace_the_built_in_ones(
    tmp_path: Path, server: LoopbackServer
) -> None:
    templates = tmp_path / "templates.toml"
    templates.write_text(
        '[dimensions.organ]\nanswer_is_label = true\nprompt = """Ask which organ it is, '
        'with {options} options; the correct answer is exactly the label."""\n'
    )
    sheet = tmp_path / "organ.xlsx"
    labels, root = slake_organ_labels(tmp_path)
    code, err = invoke("build", str(labels), "--images", str(root), "--output", str(sheet),
                       "--draft-with", spec(server), "--draft-templates", str(templates),
                       "--options", "3")  # fmt: skip
    assert code == 0, err
    rows = sheet_rows(sheet)
    assert {r["dimension"] for r in rows} == {"organ"} and len(rows) == 9
    sent = server.last_body["messages"][0]["content"]  # type: ignore[index]
    assert "Ask which organ it is, with 3 options" in sent
    assert "4 options, expected 3" in rows[0]["problem"]  # the server drafts four


TASK = DraftTask("1:identify", LabelRow("row 1", "a.png", Path("a.png"), "Liver"),
                 Template("identify", "perception", "", "", True), ("Spleen",))  # fmt: skip


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ('{"question": "Q?", "options": ["Liver", "Heart"], "answer": "Lung"}', "not one of"),
        ('{"question": "Q?", "options": ["Liver", "liver "], "answer": "Liver"}', "same text"),
        ('{"question": "Q?", "options": ["Liver"], "answer": "Liver"}', "1 options, expected 2"),
        ('{"question": "Q?", "options": ["Liver", "Spleen"], "answer": "Liver"}', "another label"),
        ('{"question": "Q?", "options": ["Heart", "Liver"], "answer": "Heart"}', "not the label"),
        ('{"question": "", "options": ["Heart", "Liver"], "answer": "Liver"}', "no 'question'"),
        ('{"question": "Q?", "options": "Liver", "answer": "Liver"}', "no 'options' list"),
        ('["Liver"]', "no JSON object"),
        ('{"question": "Q?", "options": [Liver]}', "not valid JSON"),
        (None, "empty reply"),
    ],
)
def test_unusable_drafts_say_why(reply: str | None, problem: str) -> None:
    with pytest.raises(UnusableReply, match=problem):
        read_draft(TASK, Reply("1:identify", reply, None, False), 2)


def test_a_draft_in_a_fence_after_prose_is_read() -> None:
    draft = '{"question": "Which?", "options": {"A": "Heart", "B": "liver"}, "answer": "LIVER"}'
    text = f"Here it is:\n```json\n{draft}\n```"
    drafted = read_draft(TASK, Reply("1:identify", text, None, False), 2)
    assert drafted.options == ("Heart", "liver") and drafted.answer == "liver"


def test_an_xlsx_sheet_with_an_unknown_row_is_refused_and_nothing_written(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sheet = tmp_path / "review.xlsx"
    draft(tmp_path, server, sheet)
    fill(sheet, {"1:identify": {"decision": "accept", "reviewer": "dr-a"},
                 "2:describe": {"row": "2:smell", "decision": "accept",
                                "reviewer": "dr-a"}})  # fmt: skip
    output = tmp_path / "out" / "items.jsonl"
    code, err = invoke("build-from-review", str(sheet), "--output", str(output))
    assert code == 2
    assert err.strip() == (f"medlens: error: {sheet}, row 5, column 'row': '2:smell' is not a row "
                           f"of the draft in {tmp_path / 'review.draft.json'}")  # fmt: skip
    assert not output.parent.exists()
