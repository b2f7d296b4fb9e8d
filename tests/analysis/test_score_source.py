"""`--score rules | judge:NAME | combined:NAME` in every command that reads scores: judged
scores from hand-written judge stores, scope and coverage, the fast reader against the store's
own, and the refusals (a run without the judge, a bad source) as one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from judge_fixtures import finished_run
from medlens.analysis.score_source import (
    COVERAGE_WARN,
    RULES,
    ScoreSource,
    parse_score_source,
    sourced_run,
)
from medlens.cli import app
from medlens.core.errors import SpecError
from medlens.runs.judgements import JudgeStore
from medlens.runs.store import RunStore
from medlens.stats.bootstrap import group_cis

DIMS = ["consistency", "coherence", "visual_accuracy", "ground_truth_correctness"]
WEIGHTS = {
    "consistency": 1.0,
    "coherence": 1.0,
    "visual_accuracy": 4.0,
    "ground_truth_correctness": 4.0,
}


def invoke(*args: str | Path) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error(result: Any) -> str:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("medlens: error: "), result.output
    return lines[0]


def write_stage(
    run: Path, name: str, protocol: str, lines: list[dict[str, Any]], scope: str = "all"
) -> None:
    dims = DIMS if protocol == "rubric" else []
    spec = {"schema": 1, "name": name, "judge": "openai:judge?base_url=x", "scope": scope, "repeats": 1,
            "protocol": {"name": protocol, "dimensions": dims, "weights": {d: WEIGHTS[d] for d in dims},
                         "template_sha256": "t"}, "created": "now"}  # fmt: skip
    store = JudgeStore.open_or_create(run / "judges" / name, spec)
    for line in lines:
        store.append(line)
    store.close()


def line(
    item: str, score: float | None, status: str = "ok", verdict: Any = None, by: str = "judge"
) -> dict[str, Any]:
    return {"id": item, "repeat": 0, "by": by, "fingerprint": None, "output": "", "status": status,
            "verdict": verdict, "score": score, "error": None, "latency": 0.0, "usage": {}, "cached": False}  # fmt: skip


def rubric_line(item: str, points: dict[str, int]) -> dict[str, Any]:
    score = sum(WEIGHTS[d] * points[d] for d in DIMS) / (10 * sum(WEIGHTS.values()))
    return line(item, score, verdict={"scores": points, "rationale": ""})


@pytest.fixture
def run(tmp_path: Path) -> Path:
    """20 open items o0…o19 and 6 yes/no items c0…c5 (rule scores from a replay)."""
    return finished_run(tmp_path, n_open=20, n_closed=6)


def rule_scores(run: Path) -> dict[str, float]:
    return {i: float(r["score"]) for i, r in RunStore.open(run).records().items()}


def rubric_points(k: int) -> dict[str, int]:
    return {"consistency": 8, "coherence": k % 11, "visual_accuracy": (3 * k) % 11,
            "ground_truth_correctness": (7 * k) % 11}  # fmt: skip


def expected_rubric(k: int) -> float:
    p = rubric_points(k)
    return (
        p["consistency"]
        + p["coherence"]
        + 4 * p["visual_accuracy"]
        + 4 * p["ground_truth_correctness"]
    ) / 100


@pytest.mark.parametrize(
    ("text", "expected"),
    [("rules", RULES), ("judge:rub", ScoreSource("judge", "rub")), (" combined: eq ", ScoreSource("combined", "eq"))],
)  # fmt: skip
def test_parse_score_source(text: str, expected: ScoreSource) -> None:
    assert parse_score_source(text) == expected
    assert parse_score_source(expected.label) == expected


@pytest.mark.parametrize("text", ["", "judge", "judge:", "rules:x", "combined", "llm:x"])
def test_a_bad_score_source_is_refused(text: str) -> None:
    with pytest.raises(SpecError, match="use rules, judge:NAME or combined:NAME"):
        parse_score_source(text)


def test_judge_source_is_the_judged_scope_and_combined_keeps_the_rules_elsewhere(run: Path) -> None:
    # 18 of the 20 open items get a rubric verdict, one is unparseable, one was never judged
    write_stage(run, "rub", "rubric", [rubric_line(f"o{k}", rubric_points(k)) for k in range(18)]
                + [line("o18", None, status="unparseable")])  # fmt: skip
    store = RunStore.open(run)
    judged = sourced_run(run, store.items(), store.records(), ScoreSource("judge", "rub"))
    assert {i.id for i in judged.items} == {f"o{k}" for k in range(20)}  # the scope: open items
    assert {i: r["score"] for i, r in judged.records.items() if r["score"] is not None} == pytest.approx(
        {f"o{k}": expected_rubric(k) for k in range(18)})  # fmt: skip
    assert judged.coverage is not None
    assert (judged.coverage["verdicts"], judged.coverage["scope"]) == (18, 20)
    assert judged.coverage["left_out"] == 2 and judged.coverage["kept_rule_score"] == 0
    assert judged.coverage["missing"] == {"not judged": 1, "unparseable": 1}
    assert (
        "judged 18 of 20; 2 items without a usable verdict are left out"
        in judged.coverage["warning"]
    )
    combined = sourced_run(run, store.items(), store.records(), ScoreSource("combined", "rub"))
    rules = rule_scores(run)
    for k in range(6):  # the yes/no items keep their rule scores
        assert combined.records[f"c{k}"]["score"] == rules[f"c{k}"]
    # o18 (unparseable) and o19 (never judged) keep their rule scores: a judge never flatters
    assert (
        combined.records["o19"]["score"] == rules["o19"]
        and combined.records["o18"]["score"] == rules["o18"]
    )
    assert "vlmeval" not in combined.records["o3"]
    assert combined.coverage is not None and combined.coverage["kept_rule_score"] == 2
    assert (
        "judged 18 of 20; 2 items without a usable verdict kept their rule score"
        in combined.coverage["warning"]
    )


def test_report_json_of_a_judged_source_equals_the_hand_computation(run: Path) -> None:
    write_stage(run, "rub", "rubric", [rubric_line(f"o{k}", rubric_points(k)) for k in range(20)])
    result = invoke("report", run, "--format", "json", "--score", "judge:rub")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    values = np.array([expected_rubric(k) for k in range(20)])
    lo, hi = group_cis(values, np.zeros(20, dtype=int), np.array([f"o{k}" for k in range(20)]))
    assert data["score_source"] == "judge:rub"
    assert data["overall"]["n"] == 20 and data["overall"]["score"] == pytest.approx(values.mean())
    assert data["overall"]["ci"] == pytest.approx([lo[0], hi[0]])
    assert data["overall"]["coverage"] == {"verdicts": 20, "scope": 20}
    combined = json.loads(invoke("report", run, "-f", "json", "--score", "combined:rub").stdout)
    rules = rule_scores(run)
    everything = [*values, *(rules[f"c{k}"] for k in range(6))]
    assert combined["overall"]["n"] == 26 and combined["overall"]["score"] == pytest.approx(
        np.mean(everything)
    )
    gap = combined["closed_open"]["overall"]  # rules closed − judged open, with its CI
    assert gap["delta"] == pytest.approx(
        np.mean([rules[f"c{k}"] for k in range(6)]) - values.mean()
    )
    assert gap["delta_ci"][0] < gap["delta"] < gap["delta_ci"][1]
    assert json.loads(invoke("report", run, "-f", "json").stdout)["score_source"] == "rules"


def test_every_table_names_the_source_and_low_coverage_warns(run: Path) -> None:
    write_stage(run, "eq", "equivalence", [line(f"o{k}", float(k % 2), verdict={"equivalent": bool(k % 2)})
                                          for k in range(10)])  # fmt: skip
    text = invoke("report", run, "--score", "combined:eq").output
    assert (
        "overall (scores: rules + judge eq (overall with judge), coverage 10/20 (50.0%), uncalibrated)"
        in " ".join(text.split())
    )
    assert (
        "judged 10 of 20 (50.0% < 90%); 10 items without a usable verdict kept their rule score"
        in text
    )
    markdown = invoke("report", run, "-f", "md", "--score", "judge:eq").output
    assert (
        "## Overall (scores: judge eq (judged scope only), coverage 10/20 (50.0%), uncalibrated)"
        in markdown
    )
    sliced = invoke("slice", run, "--by", "modality", "--score", "judge:eq", "--json")
    assert sliced.exit_code == 0
    payload = json.loads(sliced.stdout)
    assert payload["score_source"] == "judge:eq" and payload["score_warnings"]
    cells = {tuple(c["key"].values()): c for c in payload["cells"]}
    assert cells[()]["coverage"] == {"verdicts": 10, "scope": 20} and cells[()]["n"] == 10
    assert cells[("CT",)]["coverage"] == {"verdicts": 5, "scope": 10}
    assert cells[("CT",)]["score"] == 0.0 and cells[("X-Ray",)]["score"] == 1.0
    assert COVERAGE_WARN > 10 / 20


def test_compare_pairs_judged_scores_with_the_same_tests(tmp_path: Path) -> None:
    a = finished_run(tmp_path / "a", n_open=20, n_closed=0, name="a")
    b = finished_run(tmp_path / "b", n_open=20, n_closed=0, name="b")
    write_stage(a, "eq", "equivalence", [line(f"o{k}", float(k < 8)) for k in range(20)])
    write_stage(b, "eq", "equivalence", [line(f"o{k}", float(k < 14)) for k in range(20)])
    result = invoke("compare", a, b, "--score", "judge:eq", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    from scipy.stats import binomtest

    assert data["score_source"] == "judge:eq" and data["overall"]["n"] == 20
    assert data["overall"]["difference"] == pytest.approx(6 / 20)
    assert (data["overall"]["wins"], data["overall"]["losses"]) == (6, 0)
    assert data["overall"]["mcnemar_p"] == pytest.approx(binomtest(6, 6, 0.5).pvalue)


def test_a_run_without_the_judge_is_one_line_in_every_command(run: Path, tmp_path: Path) -> None:
    import shutil

    write_stage(run, "eq", "equivalence", [line("o1", 1.0)])
    twin = shutil.copytree(run, tmp_path / "twin")  # compare refuses a run against itself
    for args in (["report", run], ["slice", run, "--by", "modality"], ["compare", run, twin],
                 ["board", run], ["export", run, "--format", "vlmeval", "-o", tmp_path / "x"]):  # fmt: skip
        message = one_error(invoke(*args, "--score", "judge:nope"))
        assert "no judge named 'nope'" in message and "(this run has: eq)" in message
        assert str(run) in message
    assert not (tmp_path / "x").exists()
    assert "use rules, judge:NAME" in one_error(invoke("report", run, "--score", "jury"))


def test_export_writes_judged_hits(run: Path, tmp_path: Path) -> None:
    import pandas as pd

    write_stage(run, "eq", "equivalence", [line(f"o{k}", float(k % 3 == 0)) for k in range(20)])
    assert (
        invoke(
            "export", run, "-f", "vlmeval", "-o", tmp_path / "out", "--score", "judge:eq"
        ).exit_code
        == 0
    )
    frame = pd.read_excel(tmp_path / "out" / "run_exact_matching_result.xlsx")
    assert len(frame) == 20 and frame["hit"].sum() == 7
    assert frame["log"].iloc[0].startswith("judge:eq: ")
    refused = one_error(invoke("export", run, "-f", "gmai-submission", "--score", "judge:eq"))
    assert "holds predictions, not scores" in refused


def test_the_fast_reader_equals_the_judge_store_and_steps_aside_for_a_torn_file(run: Path) -> None:
    from medlens.judges.fast_lines import fast_verdicts
    from medlens.judges.verdicts import judged_item_scores, judged_values, read_judge

    write_stage(run, "rub", "rubric", [rubric_line(f"o{k}", rubric_points(k)) for k in range(20)]
                + [line("o3", None, status="error")])  # fmt: skip
    folder = run / "judges" / "rub"
    fast = fast_verdicts(folder, read_judge(run, "rub"))
    assert fast is None  # o3 has two lines: the store decides which counts
    lines = [json.loads(x) for x in (folder / "judgements.jsonl").read_text().splitlines()]
    (folder / "judgements.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines[:20]))
    fast = fast_verdicts(folder, read_judge(run, "rub"))
    assert fast is not None
    assert fast.scores == pytest.approx(judged_item_scores(run, "rub"))
    values = judged_values(run, "rub")[0]
    assert {d: fast.points[d] for d in DIMS} == {d: pytest.approx(values[d]) for d in DIMS}
    with open(folder / "judgements.jsonl", "a") as handle:
        handle.write('{"id": "o20", "rep')  # a torn tail: the fast path steps aside
    assert fast_verdicts(folder, read_judge(run, "rub")) is None


def test_rule_settled_items_of_an_unresolved_stage_keep_their_rule_score(run: Path) -> None:
    rules = rule_scores(run)
    right = [i for i, s in rules.items() if i.startswith("o") and s == 1.0]
    wrong = [i for i, s in rules.items() if i.startswith("o") and s == 0.0]
    lines = [line(i, 1.0, by="rule") for i in right] + [
        line(i, 1.0, verdict={"equivalent": True}) for i in wrong[:3]
    ]
    write_stage(run, "eq", "equivalence", lines, scope="unresolved")
    store = RunStore.open(run)
    judged = sourced_run(run, store.items(), store.records(), ScoreSource("judge", "eq"))
    scored = {i: r["score"] for i, r in judged.records.items() if r["score"] is not None}
    assert scored == {**{i: 1.0 for i in right}, **{i: 1.0 for i in wrong[:3]}}


def test_the_python_api_reads_a_score_source(run: Path) -> None:
    import medlens

    write_stage(run, "eq", "equivalence", [line(f"o{k}", float(k < 15)) for k in range(20)])
    results = medlens.load_results(run, score="judge:eq")
    assert results["score_source"] == "judge:eq" and results["overall"]["n"] == 20
    assert results["overall"]["score"] == pytest.approx(0.75)
    assert medlens.load_results(run, score=ScoreSource("combined", "eq"))["overall"]["n"] == 26
    with pytest.raises(SpecError):
        medlens.load_results(run, score="judges:eq")
