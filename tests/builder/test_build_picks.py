"""`medlens build --distractors-from` and `build-from-picks`: distractor candidates from three
real loopback "LLMs" for real SLAKE organ labels, picked by three annotators in the sheet, built
into items whose distractors are the most-picked candidates."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from itertools import combinations
from pathlib import Path

import pytest
from sklearn.metrics import jaccard_score

from draft_fixtures import fill, invoke, sheet_rows, slake_organ_labels, spec
from draft_server import draft_reply
from loopback_server import LoopbackServer, ServerConfig, serve

Rule = Callable[[int], list[int]]
"""Number of candidates of an item → the indexes an annotator picks."""
RULES: dict[str, Rule] = {
    "pick_1": lambda n: [0, 1, 2, 3],
    "pick_2": lambda n: [0, 1, 2, min(4, n - 1)],
    "pick_3": lambda n: [0, 1, 2, n - 1],
}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with serve(ServerConfig(reply=draft_reply)) as running:
        yield running


def draft_picks(tmp_path: Path, server: LoopbackServer, sheet: Path, *models: str) -> str:
    labels, root = slake_organ_labels(tmp_path)
    specs = ",".join(spec(server, m) for m in models or ("llm-a", "llm-b", "llm-c"))
    code, err = invoke("build", str(labels), "--images", str(root), "--output", str(sheet),
                       "--distractors-from", specs, "--candidates", "4",
                       "--options", "5")  # fmt: skip
    assert code == 0, err
    return err


def picks_by_rules(sheet: Path, columns: dict[str, Rule]) -> dict[str, dict[str, str]]:
    """(item, candidate) keys → pick cells, each annotator following their rule on every item."""
    by_item: dict[str, list[str]] = {}
    for row in sheet_rows(sheet):
        if row["role"] == "candidate":
            by_item.setdefault(row["item"], []).append(row["candidate"])
    cells: dict[str, dict[str, str]] = {}
    for item, candidates in by_item.items():
        for column, rule in columns.items():
            for index in rule(len(candidates)):
                cells.setdefault(f"{item}/{candidates[index]}", {})[column] = "x"
    return cells


def fill_picks(sheet: Path, cells: dict[str, dict[str, str]]) -> None:
    fill(sheet, cells, ("item", "candidate"))


def test_pick_sheet_lists_gold_and_deduplicated_candidates_with_their_models(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sheet = tmp_path / "picks.xlsx"
    draft_picks(tmp_path, server, sheet)
    rows = sheet_rows(sheet)
    assert list(rows[0])[-3:] == ["pick_1", "pick_2", "pick_3"]
    first = [r for r in rows if r["item"] == "1"]  # Liver, on an image with both kidneys and spleen
    assert first[0]["role"] == "gold" and first[0]["option"] == "Liver"
    assert "openai:llm-c: dropped 'LIVER' (the gold answer)" in first[0]["note"]
    assert "openai:llm-a: dropped 'Spleen' (another label of this image)" in first[0]["note"]
    proposed = {r["option"]: r["proposed_by"] for r in first[1:]}
    assert proposed == {"Heart": "openai:llm-a, openai:llm-b",
                        "Left Lung": "openai:llm-b, openai:llm-c",
                        "Right Lung": "openai:llm-b, openai:llm-c",
                        "Bladder": "openai:llm-c"}  # fmt: skip
    assert all(r["option"].casefold() != "liver" for r in first[1:])
    record = json.loads((tmp_path / "picks.draft.json").read_text())
    assert record["models"] == ["openai:llm-a", "openai:llm-b", "openai:llm-c"]
    assert record["left_out"] == []


def test_most_picked_candidates_become_the_distractors(
    tmp_path: Path, server: LoopbackServer
) -> None:
    sheet = tmp_path / "picks.xlsx"
    draft_picks(tmp_path, server, sheet)
    fill_picks(sheet, picks_by_rules(sheet, RULES))
    output = tmp_path / "picked.jsonl"
    code, err = invoke("build-from-picks", str(sheet), "--output", str(output), "--seed", "3")
    assert code == 0, err
    items = {i["id"]: i for i in map(json.loads, output.read_text().splitlines())}
    assert len(items) == 9
    rows = [r for r in sheet_rows(sheet) if r["item"] == "5" and r["role"] == "candidate"]
    texts = [r["option"] for r in rows]  # Liver on an image with only the spleen: 6 candidates
    liver = items["5"]
    chosen = sorted(t for t in liver["options"].values() if t != "Liver")
    assert liver["options"][liver["answer"]] == "Liver" and len(liver["options"]) == 5
    assert set(texts[:3]) < set(chosen)  # picked by all three
    assert len(set(chosen) & {texts[3], texts[4], texts[5]}) == 1  # one vote each: a seeded tie
    meta = liver["meta"]
    assert (
        meta["pick_tie_broken_by_seed"] == "yes" and meta["annotators"] == "pick_1, pick_2, pick_3"
    )
    votes = json.loads(meta["distractor_votes"])
    assert votes == {**dict.fromkeys(texts[:3], 3), **dict.fromkeys(texts[3:], 1)}
    sets = {name: rule(6) for name, rule in RULES.items()}
    expected = [jaccard_score([i in sets[a] for i in range(6)], [i in sets[b] for i in range(6)])
                for a, b in combinations(sets, 2)]  # fmt: skip
    assert float(meta["pick_agreement"]) == pytest.approx(sum(expected) / 3, abs=5e-4)
    assert json.loads(meta["distractors_proposed_by"])[texts[0]]
    assert items["1"]["meta"]["pick_agreement"] == "1.000"  # four candidates: all picked alike
    again = tmp_path / "again.jsonl"
    assert invoke("build-from-picks", str(sheet), "--output", str(again), "--seed", "3")[0] == 0
    same = [{k: v for k, v in json.loads(line).items() if k != "images"}
            for line in again.read_text().splitlines()]  # fmt: skip
    assert same == [{k: v for k, v in i.items() if k != "images"} for i in items.values()]
    assert invoke("check", f"jsonl:{output}")[0] == 0
    runs = tmp_path / "runs"
    code, err = invoke("run", "--bench", f"jsonl:{output}", "--model", "oracle", "--out",
                       str(runs), "--name", "oracle")  # fmt: skip
    assert code == 0, err
    assert json.loads((runs / "oracle" / "results.json").read_text())["overall"]["score"] == 1.0


def test_one_csv_per_annotator(tmp_path: Path, server: LoopbackServer) -> None:
    sheet = tmp_path / "picks.csv"
    draft_picks(tmp_path, server, sheet)
    files = []
    for name, rule in RULES.items():
        copy = tmp_path / f"picks-{name}.csv"
        shutil.copy(sheet, copy)
        fill_picks(copy, picks_by_rules(copy, {name: rule}))
        files.append(str(copy))
    output = tmp_path / "picked.jsonl"
    code, err = invoke("build-from-picks", *files, "--output", str(output), "--draft",
                       str(tmp_path / "picks.draft.json"), "--seed", "3")  # fmt: skip
    assert code == 0, err
    assert "from the picks of 3 annotators" in err
    items = [json.loads(line) for line in output.read_text().splitlines()]
    assert {i["meta"]["annotators"] for i in items} == {"pick_1, pick_2, pick_3"}


def test_an_item_with_too_few_candidates_is_left_out_and_named(
    tmp_path: Path, server: LoopbackServer
) -> None:
    err = draft_picks(tmp_path, server, tmp_path / "picks.xlsx", "llm-a", "llm-bad")
    assert "labels.csv, row 1: left out (1 distinct candidates, 4 distractors needed)" in err
    record = json.loads((tmp_path / "picks.draft.json").read_text())
    assert (
        "openai:llm-bad: unusable reply (no JSON object in the reply)"
        in record["left_out"][0]["notes"]
    )
