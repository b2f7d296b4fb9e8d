"""`medlens run --extract PEER` and `medlens explain RUN --against MODE|RUN2` from the command
line: one prediction file gives each peer's number, and the score gap between two readings is
attributed to groups of items by the rules that decided them (contributions sum to the gap)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run, named_run
from medlens.cli import app

# VQA-RAD-shaped items (MEVF fields as the loader maps them) and a model's replies
ROWS = [
    ("Is there a mass?", "yes", "Yes, there is a nodule in the left lung."),
    ("Is there a mass?", "yes", "Yes"),
    ("Is the heart enlarged?", "no", "No"),
    ("Is the liver normal?", "yes", "Normal."),
    ("Is there an effusion?", "no", "There is no effusion."),
    ("Is there free air?", "no", "No free air is seen."),
    ("Where is the lesion?", "left lung", "Left lung."),
    ("Where is the lesion?", "right lobe", "The lesion is in the right lobe."),
    ("What modality is this?", "ct", "CT"),
    ("Which organ is shown?", "liver", ""),
]


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    items = []
    for n, (question, gold, _) in enumerate(ROWS):
        meta = {"source": "vqa-rad", "image_id": f"img{n}"}
        if gold in ("yes", "no"):
            items.append({"id": str(n), "question": question, "kind": "yes_no", "answer": gold,
                          "meta": {**meta, "answer_set": "yes/no", "raw_answer": gold,
                                   "answer_type": "closed"}})  # fmt: skip
        else:
            items.append({"id": str(n), "question": question, "kind": "open", "answer": gold,
                          "meta": {**meta, "answer_type": "open"}})  # fmt: skip
    bench = tmp_path / "vqa_rad.jsonl"
    bench.write_text("".join(json.dumps(item) + "\n" for item in items))
    replay = tmp_path / "predictions.csv"
    with replay.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["index", "prediction"])
        writer.writerows((str(n), reply) for n, (_, _, reply) in enumerate(ROWS))
    return bench, replay


def _explain(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["explain", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def test_each_peers_number_from_one_prediction_file(tmp_path: Path) -> None:
    bench, replay = _inputs(tmp_path)
    runs = tmp_path / "runs"
    ours = named_run(f"jsonl:{bench}", f"replay:{replay}", runs, "medlens")
    peers = {}
    for mode in ("medevalkit", "multimedeval"):
        run = named_run(f"jsonl:{bench}", f"replay:{replay}", runs, mode, "--extract", mode)
        peers[mode] = json.loads((run / "results.json").read_text())
    # By hand from the peers' rules (tests/extract/test_peer_modes.py cites their lines).
    # MedEvalKit, closed: 'yes' XOR 'no' as substrings and the gold inside; open: exact match.
    # Right: 1 "Yes", 2 "No", 4 "…no effusion", 5 "No free air…", 8 "CT" = 5 of 10; wrong: 0
    # ("nodule" holds "no"), 3 ("normal" holds "no", gold yes), 6 ("left lung." keeps its dot),
    # 7 (a sentence), 9 (empty: the peer's ROUGE would crash).
    assert peers["medevalkit"]["overall"]["score"] == pytest.approx(5 / 10)
    # MultiMedEval, closed: token recall ≥ 0.4 ("not" counts as "no"); open: recall ≥ 0.75.
    # Right: 0, 1, 2, 4, 5, 6, 7 (both gold words), 8 = 8 of 10; wrong: 3 (no "yes"), 9 (empty).
    assert peers["multimedeval"]["overall"]["score"] == pytest.approx(8 / 10)
    # the peers' own figures: MultiMedEval has no overall, closed 5 of 6 and open 3 of 4
    figures = peers["multimedeval"]["peer"]["figures"]
    assert set(figures) == {"closedQuestionsAccuracy", "openQuestionsAccuracy"}
    assert figures["closedQuestionsAccuracy"]["value"] == pytest.approx(5 / 6)
    assert figures["openQuestionsAccuracy"]["value"] == pytest.approx(3 / 4)
    medevalkit = peers["medevalkit"]["peer"]["figures"]
    assert medevalkit["total acc"]["value"] == pytest.approx(0.5)
    assert medevalkit["close acc"]["value"] == pytest.approx(4 / 6)  # 1, 2, 4, 5
    assert medevalkit["open acc"]["n"] == 4
    records = [json.loads(line) for line in (runs / "medevalkit" / "records.jsonl").open()]
    assert {r["extraction"]["method"] for r in records if r["id"] == "9"} == {
        "medevalkit:peer_would_crash"
    }
    explained = _explain(str(ours), "--against", "medevalkit")
    ours_score = json.loads((ours / "results.json").read_text())["overall"]["score"]
    assert explained["score"] == pytest.approx(ours_score)
    assert explained["against_score"] == pytest.approx(peers["medevalkit"]["overall"]["score"])
    groups = explained["groups"]
    assert isinstance(groups, list)
    assert sum(g["contribution"] for g in groups) == pytest.approx(explained["gap"])
    assert sum(g["net_items"] for g in groups) == pytest.approx(explained["gap"] * 10)
    assert sum(g["n"] for g in groups) == explained["differing"]
    rules = {(g["rule"], g["against_rule"]) for g in groups}
    assert ("leading_word", "medevalkit:both_or_neither") in rules  # "Yes, … nodule"


def test_explain_against_another_run_of_the_same_benchmark(tmp_path: Path) -> None:
    bench, replay = _inputs(tmp_path)
    runs = tmp_path / "runs"
    ours = named_run(f"jsonl:{bench}", f"replay:{replay}", runs, "medlens")
    theirs = named_run(
        f"jsonl:{bench}", f"replay:{replay}", runs, "mme", "--extract", "multimedeval"
    )
    by_run = _explain(str(ours), "--against", str(theirs))
    by_mode = _explain(str(ours), "--against", "multimedeval")
    assert by_run["gap"] == pytest.approx(by_mode["gap"])
    assert by_run["groups"] == by_mode["groups"]
    text = CliRunner().invoke(app, ["explain", str(ours), "--against", "multimedeval"])
    assert text.exit_code == 0 and "verdicts differ on" in text.output


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bench, replay = _inputs(tmp_path)
    runs = tmp_path / "runs"
    result = invoke_run(f"jsonl:{bench}", f"replay:{replay}", runs, "x", "--extract", "lmms")
    assert result.exit_code == 2 and "--extract 'lmms': expected one of" in result.output
    assert not (runs / "x").exists()
    refused = invoke_run(f"jsonl:{bench}", f"replay:{replay}", runs, "y", "--extract", "lmms-eval")
    assert refused.exit_code == 2
    assert "lmms-eval has no vqa-rad task" in refused.output and not (runs / "y").exists()
    ours = named_run(f"jsonl:{bench}", f"replay:{replay}", runs, "ours")
    other_bench = tmp_path / "other.jsonl"
    other_bench.write_text(json.dumps({"id": "0", "question": "q", "kind": "open", "answer": "a"}))
    other = named_run(f"jsonl:{other_bench}", "oracle", runs, "other")
    for against, message in (
        (str(other), f"{other / 'run.json'}, field 'spec.benchmark.content_hash'"),
        ("nosuch", "neither a reading mode"),
        ("lmms-eval", "lmms-eval has no vqa-rad task"),
    ):
        result = CliRunner().invoke(app, ["explain", str(ours), "--against", against])
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1
