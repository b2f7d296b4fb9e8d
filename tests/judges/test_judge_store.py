"""The judge store: judge.json written once, append-only judgements.jsonl, torn lines, compaction,
refusal of a changed spec, and the replay loader."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from medlens.core.errors import InputError, MedlensError, RunMismatchError, SpecError
from medlens.core.items import Item
from medlens.core.specs import parse_spec
from medlens.judges.options import default_judge_name
from medlens.judges.replay import make_replay_judge
from medlens.models.base import Request
from medlens.runs.judgements import JudgeStore, judge_names
from medlens.runs.judgements import stored_replies as load_replies

SPEC: dict[str, Any] = {
    "schema": 1,
    "name": "j",
    "judge": "openai:j?base_url=http://127.0.0.1:1/v1",
    "protocol": {"name": "equivalence", "dimensions": [], "weights": {}, "template_sha256": "t"},
    "scope": "unresolved",
    "repeats": 1,
    "created": "2026-12-01T00:00:00+00:00",
}


def line(
    item_id: str, repeat: int = 0, status: str = "ok", output: str | None = "{}"
) -> dict[str, Any]:
    return {"id": item_id, "repeat": repeat, "by": "judge", "fingerprint": "f", "output": output,
            "status": status, "verdict": None, "score": 1.0 if status == "ok" else None,
            "error": None, "latency": 0.0, "usage": {}, "cached": False}  # fmt: skip


def test_judge_json_is_written_first_and_kept(tmp_path: Path) -> None:
    folder = tmp_path / "run" / "judges" / "j"
    store = JudgeStore.open_or_create(folder, SPEC)
    store.append(line("a"))
    store.close()
    assert json.loads((folder / "judge.json").read_text()) == SPEC
    later = {**SPEC, "created": "2026-12-02T00:00:00+00:00"}
    again = JudgeStore.open_or_create(folder, later)  # `created` is not part of the identity
    assert again.spec == SPEC and again.done() == {("a", 0)}
    assert judge_names(tmp_path / "run") == ["j"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("judge", "openai:other?base_url=x"), ("scope", "all"), ("repeats", 3),
     ("protocol", {**SPEC["protocol"], "template_sha256": "u"})],
)  # fmt: skip
def test_a_changed_spec_is_refused_and_changes_nothing(
    tmp_path: Path, field: str, value: Any
) -> None:
    folder = tmp_path / "j"
    store = JudgeStore.open_or_create(folder, SPEC)
    store.append(line("a"))
    store.close()
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(RunMismatchError, match=field):
        JudgeStore.open_or_create(folder, {**SPEC, field: value})
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_torn_errored_and_repeated_lines_are_compacted_on_resume(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    JudgeStore.open_or_create(folder, SPEC).close()
    rows = [line("a"), line("b", status="error"), line("c", status="unparseable"), line("a")]
    text = "".join(json.dumps(r) + "\n" for r in rows) + '{"id": "d", "rep'
    (folder / "judgements.jsonl").write_text(text)
    read_only = JudgeStore.open(folder)
    assert set(read_only.lines()) == {("a", 0), ("b", 0), ("c", 0)}
    assert (folder / "judgements.jsonl").read_text() == text  # reading changes nothing
    resumed = JudgeStore.open_or_create(folder, SPEC)
    assert resumed.done() == {("a", 0), ("c", 0)}  # the errored line is judged again
    kept = [json.loads(x) for x in (folder / "judgements.jsonl").read_text().splitlines()]
    assert [(k["id"], k["status"]) for k in kept] == [("a", "ok"), ("c", "unparseable")]


def test_a_success_is_kept_over_a_later_error(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    JudgeStore.open_or_create(folder, SPEC).close()
    rows = [line("a"), line("a", status="error")]
    (folder / "judgements.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert JudgeStore.open(folder).lines()[("a", 0)]["status"] == "ok"


def test_lines_are_grouped_by_item_in_repeat_order(tmp_path: Path) -> None:
    store = JudgeStore.open_or_create(tmp_path / "j", SPEC)
    for row in (line("a", 1), line("b", 0), line("a", 0)):
        store.append(row)
    grouped = dict(store.by_item())
    assert [r["repeat"] for r in grouped["a"]] == [0, 1]
    store.close()


def test_a_damaged_judge_json_is_one_error(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    folder.mkdir()
    (folder / "judge.json").write_text("{not json")
    with pytest.raises(MedlensError, match=r"judge\.json: unreadable"):
        JudgeStore.open(folder)
    (folder / "judge.json").write_text("[]")
    with pytest.raises(MedlensError, match="not a medlens judge file"):
        JudgeStore.open(folder)


def test_replay_answers_from_stored_replies(tmp_path: Path) -> None:
    folder = tmp_path / "j"
    store = JudgeStore.open_or_create(folder, SPEC)
    store.append(line("a", 0, output='{"equivalent": true}'))
    store.append(line("a", 1, output='{"equivalent": false}'))
    store.append({**line("r"), "by": "rule", "output": None})
    store.close()
    assert load_replies(folder) == {
        ("a", 0): '{"equivalent": true}',
        ("a", 1): '{"equivalent": false}',
    }
    judge = make_replay_judge(parse_spec(f"replay:{folder}"))
    assert judge.spec.startswith(f"replay:{folder}?sha256=")
    item = Item(id="a", question="q", kind="open", answer="x")

    def ask(item_id: str, repeat: int) -> Any:
        request = Request(Item(id=item_id, question="q", kind="open"), (), {"repeat": repeat}, "f")
        return asyncio.run(judge.generate(request))

    assert ask("a", 1).text == '{"equivalent": false}' and item.id == "a"
    missing = ask("zz", 0)
    assert missing.text is None and missing.error is not None and "zz" in missing.error.message


def test_replay_refuses_what_is_not_a_judge_store(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a judge folder"):
        load_replies(tmp_path / "absent")
    bad = tmp_path / "judgements.jsonl"
    bad.write_text('{"id": "a", "repeat": 0}\nnot json\n')
    with pytest.raises(InputError, match="line 2"):
        load_replies(bad)
    with pytest.raises(SpecError, match="replay:PATH"):
        make_replay_judge(parse_spec("replay"))


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("openai:gpt-4o?base_url=http://x/v1", "gpt-4o"),
        ("openai:Qwen/Qwen2.5-VL-72B?base_url=http://x/v1", "Qwen2.5-VL-72B"),
        ("hf:/models/tiny-judge/", "tiny-judge"),
        ("vllm:/m/llama 3", "llama_3"),
        ("replay:runs/a/judges/b", "replay-b"),
    ],
)
def test_default_judge_names(spec: str, name: str) -> None:
    assert default_judge_name(parse_spec(spec)) == name
