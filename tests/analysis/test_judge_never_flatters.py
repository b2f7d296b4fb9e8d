"""A judge never flatters (issue 30, items 1–2): under ``combined:NAME`` an item of the judged
scope without a usable verdict keeps its rule score and is counted; under ``judge:NAME`` it is
left out; and every reader of a judge store (the judge stage's own table, ``--score``, the
verdict values of agreement) treats order flips and even-repeat ties alike."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.analysis.score_source import ScoreSource, sourced_run
from medlens.cli import app
from medlens.judges.verdicts import judged_item_scores, judged_values, read_verdicts
from medlens.runs.judgements import JudgeStore
from medlens.runs.store import RunStore

FAILURES = ("unparseable", "error", "flip", "tie", "absent")


def write_stage(
    run: Path, name: str, lines: list[dict[str, Any]], repeats: int = 1, swap: bool = False
) -> None:
    spec = {"schema": 1, "name": name, "judge": "openai:judge?base_url=x", "scope": "all",
            "repeats": repeats, "protocol": {"name": "equivalence", "dimensions": [], "weights": {},
                                             "template_sha256": "t"}, "created": "now"}  # fmt: skip
    if swap:
        spec["swap"] = True
    store = JudgeStore.open_or_create(run / "judges" / name, spec)
    for line in lines:
        store.append(line)
    store.close()


def line(
    item: str, score: float | None, repeat: int = 0, status: str = "ok", **extra: Any
) -> dict[str, Any]:
    verdict = None if score is None else {"equivalent": bool(score)}
    return {"id": item, "repeat": repeat, "by": "judge", "output": "", "status": status,
            "verdict": verdict, "score": score, "error": None, "latency": 0.0, "usage": {},
            "cached": False, **extra}  # fmt: skip


def item_lines(item: str, outcome: str, value: float) -> list[dict[str, Any]]:
    """Two repeats of one item: a usable verdict `value`, or one of the failures."""
    if outcome == "ok":
        return [line(item, value), line(item, value, repeat=1)]
    if outcome == "tie":
        return [line(item, 1.0), line(item, 0.0, repeat=1)]
    if outcome == "flip":
        return [line(item, 1.0), line(item, 0.0, repeat=1, order="swapped")]
    if outcome == "absent":
        return []
    return [
        line(item, None, status=outcome, failure=outcome),
        line(item, None, 1, outcome, failure=outcome),
    ]


def mean_score(records: dict[str, Any]) -> float:
    return float(np.mean([r["score"] for r in records.values() if r["score"] is not None]))


def test_combined_lies_between_the_rules_and_every_failure_judged_right(tmp_path: Path) -> None:
    """For any pattern of judge failures on the items the rules counted wrong (the items a
    judge is asked about), combined ≥ rules, ≤ the score with every failed item judged right,
    and equals the rules when the judge fails everywhere (seeded: 60 patterns + the extremes)."""
    run = finished_run(tmp_path, n_open=30, n_closed=6)
    store = RunStore.open(run)
    items, records = store.items(), store.records()
    rules = mean_score(records)
    wrong = sorted(i for i, r in records.items() if i.startswith("o") and r["score"] == 0.0)
    settled = [
        {**line(i, 1.0), "by": "rule"}
        for i, r in records.items()
        if i.startswith("o") and r["score"] == 1.0
    ]
    assert len(wrong) >= 10 and settled
    draw = random.Random(30)
    patterns = [{i: "unparseable" for i in wrong}, {i: "ok" for i in wrong}]
    patterns += [{i: draw.choice(("ok", *FAILURES)) for i in wrong} for _ in range(60)]
    for number, pattern in enumerate(patterns):
        values = {i: float(draw.random() < 0.5) for i in wrong}
        name = f"j{number}"
        asked = [x for i in wrong for x in item_lines(i, pattern[i], values[i])]
        write_stage(run, name, settled + asked, 2, swap=True)
        combined = sourced_run(run, items, records, ScoreSource("combined", name))
        score = mean_score(combined.records)
        failed = [i for i in wrong if pattern[i] != "ok"]
        best = dict(combined.records)
        best.update({i: {**records[i], "score": 1.0} for i in failed})
        assert rules - 1e-12 <= score <= mean_score(best) + 1e-12, pattern
        assert combined.coverage is not None and combined.coverage["kept_rule_score"] == len(failed)
        assert (combined.coverage["warning"] is not None) == bool(failed)
        if len(failed) == len(wrong):
            assert score == pytest.approx(rules)
        judged = sourced_run(run, items, records, ScoreSource("judge", name))
        assert judged.coverage is not None and judged.coverage["left_out"] == len(failed)


def test_a_judge_answering_prose_leaves_overall_with_judge_at_the_rule_score(
    tmp_path: Path,
) -> None:
    """The issue's case: a judge that answers garbage to everything used to *raise* "overall
    with judge" (the failed items were the rule-wrong ones and were dropped)."""
    run = finished_run(tmp_path, n_open=40, n_closed=10)
    with serve(judge_config(JudgeReplies("unparseable"))) as server:
        judged = CliRunner().invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                          "--protocol", "equivalence", "--no-cache"])  # fmt: skip
    assert judged.exit_code == 0, judged.output
    rules = json.loads(CliRunner().invoke(app, ["report", str(run), "-f", "json"]).stdout)
    result = CliRunner().invoke(
        app, ["report", str(run), "-f", "json", "--score", "combined:judge-model"]
    )
    combined = json.loads(result.stdout)
    assert combined["overall"]["score"] == pytest.approx(rules["overall"]["score"])
    assert combined["overall"]["n"] == rules["overall"]["n"] == 50
    coverage = combined["score_coverage"]
    exact = sum(
        1
        for r in RunStore.open(run).records().values()
        if r["score"] == 1.0 and r["id"].startswith("o")
    )
    assert coverage["verdicts"] == exact  # the items the rules settled, and no other
    assert coverage["kept_rule_score"] == coverage["scope"] - exact > 0
    assert "kept their rule score" in result.stderr
    text = CliRunner().invoke(app, ["report", str(run), "--score", "judge:judge-model"])
    assert "are left out of the judged score" in text.output


def test_flips_and_even_repeat_ties_are_no_verdict_in_every_reader(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=6, n_closed=0)
    lines = [*item_lines("o0", "ok", 1.0), *item_lines("o1", "ok", 0.0), *item_lines("o2", "tie", 0),
             *item_lines("o3", "flip", 0), *item_lines("o4", "unparseable", 0)]  # fmt: skip
    write_stage(run, "eq", lines, repeats=2, swap=True)
    verdicts = read_verdicts(run, "eq")
    assert verdicts.scores == {"o0": 1.0, "o1": 0.0}
    assert verdicts.missing == {"o2": "unresolved", "o3": "order_flip", "o4": "unparseable"}
    assert judged_item_scores(run, "eq") == verdicts.scores
    assert judged_values(run, "eq")[0]["equivalent"] == verdicts.scores  # agreement reads the same
    report = json.loads(CliRunner().invoke(app, ["report", str(run), "-f", "json"]).stdout)
    stage = report["judges"]["eq"]["overall"]
    assert stage["n"] == 2 and stage["score"] == pytest.approx(0.5)  # the stage's own figure
    sourced = json.loads(
        CliRunner().invoke(app, ["report", str(run), "-f", "json", "--score", "judge:eq"]).stdout
    )
    assert sourced["overall"]["n"] == 2 and sourced["overall"]["score"] == pytest.approx(0.5)
    assert sourced["score_coverage"]["missing"] == {"not judged": 1, "order_flip": 1, "unparseable": 1,
                                                    "unresolved": 1}  # fmt: skip


def test_extraction_sensitivity_compares_the_same_items_under_every_source(tmp_path: Path) -> None:
    """The issue's case: under combined:NAME the line compared all items' score with the rule
    reading of the unjudged ones (+0.138 with CI [−0.047, +0.047])."""
    run = finished_run(tmp_path, n_open=30, n_closed=20)
    write_stage(run, "eq", [line(f"o{k}", 1.0) for k in range(30)])
    for source in ("rules", "combined:eq", "judge:eq"):
        data = json.loads(
            CliRunner().invoke(app, ["report", str(run), "-f", "json", "--score", source]).stdout
        )
        line_ = data["extraction_sensitivity"]
        if line_ is None:
            continue
        lo, hi = line_["ci"]
        assert lo - 1e-12 <= line_["difference"] <= hi + 1e-12, (source, line_)
        read = [r for r in RunStore.open(run).records().values() if (r.get("vlmeval") or {}).get("score") is not None
                and (source == "rules" or not r["id"].startswith("o"))]  # fmt: skip
        assert line_["n"] == len(read), source  # the items read both ways, never a judged one
        assert line_["medlens"] == pytest.approx(np.mean([r["score"] for r in read]))
