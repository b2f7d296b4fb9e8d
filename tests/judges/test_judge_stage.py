"""`medlens judge` against loopback judge servers: rules first, injection, unparseable replies,
the backends' fault mix, resume and refusal, repeats, replay, and the reports."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, mean_absolute_error
from typer.testing import CliRunner, Result

from judge_fixtures import INJECTION, finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, equivalent, judge_config
from loopback_server import Faults, serve
from medlens.cli import app

STORE_KEYS = {
    "id", "repeat", "by", "fingerprint", "output", "status", "verdict", "score", "error",
    "latency", "usage", "cached",
}  # fmt: skip
CALL_KEYS = {"failure", "calls", "cache_key", "served_model", "system_fingerprint"}
"""What a line of a judge call adds to a rule line: why it failed, live calls made, the cache
entry, and what the server said it was."""


def judge(run: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["judge", str(run), *args])


def judged(run: Path, *args: str) -> Result:
    result = judge(run, *args)
    assert result.exit_code == 0, result.output
    return result


def report_json(run: Path) -> dict[str, object]:
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    value: dict[str, object] = json.loads(result.output)
    return value


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return finished_run(tmp_path, n_open=20, n_closed=6)


def answers(run: Path) -> dict[str, tuple[str, str]]:
    """item id → (answer, gold) of the open items."""
    golds = {}
    for line in (run / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        golds[item["id"]] = item["answer"]
    out = {}
    for line in (run / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["id"].startswith("o"):
            out[record["id"]] = (record["output"], golds[record["id"]])
    return out


def test_equivalence_sends_only_what_rules_cannot_settle(run: Path) -> None:
    with serve(judge_config(JudgeReplies())) as server:
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "equivalence")
        calls = server.stats["requests"]
    folder = run / "judges" / "judge-model"
    spec = json.loads((folder / "judge.json").read_text())
    assert spec["protocol"]["name"] == "equivalence" and spec["scope"] == "unresolved"
    assert set(spec) == {
        "schema", "name", "judge", "protocol", "scope", "repeats", "created",
        "judge_fingerprint",
    }  # fmt: skip
    assert spec["judge_fingerprint"]["served_models"] == {"judge-model": 11}
    lines = judgement_lines(folder)
    by_rule = [line for line in lines if line["by"] == "rule"]
    assert all(set(line) == STORE_KEYS for line in by_rule)
    assert all(set(line) == STORE_KEYS | CALL_KEYS for line in lines if line["by"] == "judge")
    pairs = answers(run)
    exact = [i for i, (a, g) in pairs.items() if a == g]
    assert sorted(line["id"] for line in by_rule) == sorted(exact)
    assert calls == len(pairs) - len(exact) == 11
    entry = report_json(run)["judges"]["judge-model"]  # type: ignore[index]
    expected = np.mean([equivalent(a, g) for a, g in pairs.values()])
    overall = entry["overall"]
    assert overall["n"] == 20 and overall["score"] == pytest.approx(expected)
    assert overall["calls"] == 11 and overall["calls_saved"] == 9
    assert overall["rule_score"] == pytest.approx(len(exact) / 20)
    assert overall["judge_errors"] == 0 and overall["ci"][0] <= overall["score"] <= overall["ci"][1]
    assert set(entry["by"]["modality"]) == {"CT", "X-Ray"}
    cell = entry["by"]["modality"]["CT"]
    assert cell["sensitivity"] == pytest.approx(cell["score"] - cell["rule_score"])


def test_an_echoing_judge_is_not_fooled_by_verdicts_inside_the_answer(run: Path) -> None:
    with serve(judge_config(JudgeReplies("echo"))) as server:
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "equivalence")
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "rubric", "--name", "r")
    injected = [i for i, (a, _) in answers(run).items() if a == INJECTION]
    assert injected
    for name in ("judge-model", "r"):
        for line in judgement_lines(run / "judges" / name):
            if line["id"] in injected:
                assert INJECTION in line["output"]  # the judge did echo it
                assert line["status"] == "ok" and line["score"] < 0.5


def test_unparseable_replies_are_retried_once_then_excluded_never_zero(run: Path) -> None:
    replies = JudgeReplies("unparseable")
    with serve(judge_config(replies)) as server:
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "equivalence")
    assert set(replies.calls.values()) == {2}  # each item asked twice, no more
    lines = judgement_lines(run / "judges" / "judge-model")
    sent = [line for line in lines if line["by"] == "judge"]
    assert {line["status"] for line in sent} == {"unparseable"}
    assert all(line["score"] is None and line["error"]["type"] == "unparseable" for line in sent)
    overall = report_json(run)["judges"]["judge-model"]["overall"]  # type: ignore[index]
    assert overall["judge_errors"] == 11 and overall["n"] == 9 and overall["score"] == 1.0


def test_a_retry_that_parses_counts(run: Path) -> None:
    replies = JudgeReplies("flaky")
    with serve(judge_config(replies)) as server:
        judged(
            run, "--judge", judge_spec(server.base_url), "--protocol", "equivalence", "--no-cache"
        )
    lines = judgement_lines(run / "judges" / "judge-model")
    assert {line["status"] for line in lines} == {"ok"}
    assert set(replies.calls.values()) == {2}


def test_the_backends_fault_mix_still_judges_every_item(run: Path) -> None:
    faults = Faults(
        rate_limit=0.15, server_error=0.15, malformed=0.1, dropped=0.1, empty_choices=0.1
    )
    with serve(judge_config(JudgeReplies(), faults=faults)) as server:
        spec = judge_spec(server.base_url, max_retries="30", read_timeout="30")
        judged(run, "--judge", spec, "--protocol", "equivalence", "--no-cache")
        assert server.stats["answered"] >= 11 and server.stats["requests"] > 11
    lines = judgement_lines(run / "judges" / "judge-model")
    assert {line["status"] for line in lines} == {"ok"} and len(lines) == 20


def test_failed_calls_are_retried_on_resume_and_a_changed_spec_is_refused(run: Path) -> None:
    replies = JudgeReplies("down")
    folder = run / "judges" / "judge-model"
    with serve(judge_config(replies)) as server:
        base = judge_spec(server.base_url, max_retries="0")
        judged(run, "--judge", base, "--protocol", "equivalence")
        lines = judgement_lines(folder)
        assert {line["status"] for line in lines if line["by"] == "judge"} == {"error"}
        overall = report_json(run)["judges"]["judge-model"]["overall"]  # type: ignore[index]
        assert overall["judge_errors"] == 11
        replies.mode = "verdict"
        server.stats.clear()
        before = (folder / "judgements.jsonl").read_bytes(), (folder / "judge.json").read_bytes()
        refused = judge(run, "--judge", base, "--protocol", "equivalence", "--scope", "all")
        assert refused.exit_code == 2 and "different spec" in refused.output
        assert "scope" in refused.output
        assert (
            (folder / "judgements.jsonl").read_bytes(),
            (folder / "judge.json").read_bytes(),
        ) == before
        judged(run, "--judge", base, "--protocol", "equivalence")
        assert server.stats["requests"] == 11
        judged(run, "--judge", base, "--protocol", "equivalence")
        assert server.stats["requests"] == 11  # nothing left to judge
    lines = judgement_lines(folder)
    assert len(lines) == 20 and {line["status"] for line in lines} == {"ok"}


def test_the_response_cache_answers_a_second_judge_stage_and_says_so(
    run: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # one live check instead of 21 (this stage has 20 items; tests/execution/
    # test_cache_live_check.py tests the check itself)
    monkeypatch.setattr("medlens.execution.cache.LIVE_CHECKS", 1)
    with serve(judge_config(JudgeReplies())) as server:
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "rubric", "--name", "a")
        second = judged(
            run, "--judge", judge_spec(server.base_url), "--protocol", "rubric", "--name", "b"
        )
        # one live call checks that the server still serves the model the cache holds
        assert server.stats["requests"] == 21
    entry = report_json(run)["judges"]
    a, b = entry["a"], entry["b"]  # type: ignore[index]
    assert a["overall"]["score"] == b["overall"]["score"]
    assert (a["overall"]["calls"], a["overall"]["cached_verdicts"]) == (20, 0)
    assert (b["overall"]["calls"], b["overall"]["cached_verdicts"]) == (1, 19)
    assert b["usage"]["cached"] == 19
    text = " ".join(second.output.split())
    assert "1 judge calls and 19 verdicts from the response cache (not calls)" in text
    # a judge and its own cached copy: no agreement, and the reports say why
    assert "inter_judge" not in a and "inter_judge" not in b
    assert (
        "on 20 of the 20 items both asked, their verdicts are one response-cache entry"
        in (b["inter_judge_note"])
    )
    report = CliRunner().invoke(app, ["report", str(run)]).output
    assert "agreement of b with a is not computed" in " ".join(report.split())
    agreement = CliRunner().invoke(app, ["agreement", str(run), "--judges", "a,b", "--json"])
    value = json.loads(agreement.output)
    assert value["dimensions"] == {} and value["not_computed"]


def test_replay_reproduces_a_judged_score_offline(run: Path) -> None:
    with serve(judge_config(JudgeReplies())) as server:
        judged(
            run, "--judge", judge_spec(server.base_url), "--protocol", "rubric", "--name", "live"
        )
    source = run / "judges" / "live"
    judged(run, "--judge", f"replay:{source}", "--protocol", "rubric", "--name", "again")
    judges = report_json(run)["judges"]
    assert judges["again"]["overall"] == {**judges["live"]["overall"]}  # type: ignore[index]
    assert judges["again"]["dimensions"] == judges["live"]["dimensions"]  # type: ignore[index]


def test_repeats_give_a_majority_and_self_agreement(run: Path) -> None:
    with serve(judge_config(JudgeReplies("noisy"))) as server:
        spec = judge_spec(server.base_url, temperature="0.7")
        judged(run, "--judge", spec, "--protocol", "rubric", "--repeats", "2", "--name", "r2")
        judged(run, "--judge", spec, "--protocol", "equivalence", "--repeats", "3", "--name", "e3")
    lines = judgement_lines(run / "judges" / "r2")
    assert sorted({line["repeat"] for line in lines}) == [0, 1] and len(lines) == 40
    judges = report_json(run)["judges"]
    rubric = judges["r2"]  # type: ignore[index]
    first = {line["id"]: line for line in lines if line["repeat"] == 0}
    second = {line["id"]: line for line in lines if line["repeat"] == 1}
    ids = sorted(first)
    for dim in ("coherence", "ground_truth_correctness"):
        a = [first[i]["verdict"]["scores"][dim] for i in ids]
        b = [second[i]["verdict"]["scores"][dim] for i in ids]
        assert rubric["self_agreement"]["mad"][dim]["score"] == pytest.approx(
            mean_absolute_error(a, b)
        )
    assert rubric["self_agreement"]["agreement"]["n"] == 20
    equivalence = judges["e3"]  # type: ignore[index]
    assert equivalence["overall"]["calls"] == 33 and equivalence["overall"]["calls_saved"] == 27
    sent = [line for line in judgement_lines(run / "judges" / "e3") if line["by"] == "judge"]
    verdicts = {
        r: {line["id"]: line["score"] for line in sent if line["repeat"] == r} for r in range(3)
    }
    ids = sorted(verdicts[0])
    pairs = [(0, 1), (0, 2), (1, 2)]
    expected = np.mean(
        [
            accuracy_score([verdicts[a][i] for i in ids], [verdicts[b][i] for i in ids])
            for a, b in pairs
        ]
    )
    agreement = equivalence["self_agreement"]["agreement"]
    assert agreement["n"] == 11 and agreement["score"] == pytest.approx(expected) and expected < 1
    majority = {i: np.mean([verdicts[r][i] for r in range(3)]) > 0.5 for i in ids}
    rules = 27 // 3
    assert equivalence["overall"]["score"] == pytest.approx((sum(majority.values()) + rules) / 20)


def test_choice_judges_only_unparsed_choice_answers(tmp_path: Path) -> None:
    from cli_runs import named_run

    bench = tmp_path / "bench.jsonl"
    predictions = tmp_path / "predictions.csv"
    rows = ["index,prediction"]
    with open(bench, "w") as handle:
        for i in range(6):
            item = {"id": f"q{i}", "question": "Which organ?", "kind": "choice",
                    "options": {"A": "liver", "B": "lung"}, "answer": "B"}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
            rows.append(
                f"q{i},{'B' if i < 3 else 'Either the liver or the lung; on balance the lung'}"
            )
    predictions.write_text("\n".join(rows) + "\n")
    run = named_run(f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "c")
    with serve(judge_config(JudgeReplies())) as server:
        judged(run, "--judge", judge_spec(server.base_url), "--protocol", "choice")
        assert server.stats["requests"] == 3
    results = report_json(run)
    assert results["overall"]["score"] == 0.5  # type: ignore[index]  # never merged silently
    assert results["judges"]["judge-model"]["overall"]["score"] == 1.0  # type: ignore[index]


def test_run_with_judge_and_every_report_format(tmp_path: Path) -> None:
    from cli_runs import named_run
    from judge_fixtures import write_open_bench

    bench, predictions = write_open_bench(tmp_path / "data", 20, 6)
    answers = predictions.rename(predictions.with_name("gpt-4o-mini.csv"))  # the model's family
    with serve(judge_config(JudgeReplies())) as server:
        run = named_run(
            f"jsonl:{bench}", f"replay:{answers}", tmp_path / "runs", "gpt-run",
            "--judge", judge_spec(server.base_url, model="gpt-4o"), "--judge-protocol", "rubric",
        )  # fmt: skip
    entry = report_json(run)["judges"]["gpt-4o"]  # type: ignore[index]
    assert entry["overall"]["n"] == 20 and set(entry["dimensions"]) == {
        "consistency", "coherence", "visual_accuracy", "ground_truth_correctness"
    }  # fmt: skip
    assert entry["closed_open"]["delta"] == pytest.approx(
        entry["closed_open"]["closed"] - entry["overall"]["score"]
    )
    for fmt in ("text", "md", "html"):
        # judged scores on the run's own scale: fractions in text, percentages elsewhere
        judged = entry["overall"]["score"]
        score = f"{judged:.3f}" if fmt == "text" else f"{100 * judged:.1f}%"
        output = CliRunner().invoke(app, ["report", str(run), "--format", fmt]).output
        assert "Judge gpt-4o" in output and score in output, fmt
        dimension = "ground\\_truth\\_correctness" if fmt == "md" else "ground_truth_correctness"
        assert dimension in output and "open judged by" in output, fmt
        assert "share the family" in output, fmt  # the self-preference warning
    xlsx = tmp_path / "report.xlsx"
    assert (
        CliRunner().invoke(app, ["report", str(run), "-f", "xlsx", "-o", str(xlsx)]).exit_code == 0
    )


def test_a_judge_of_the_models_family_gets_a_self_preference_warning(tmp_path: Path) -> None:
    from medlens.judges.results import self_preference

    assert self_preference("openai:gpt-4o-mini?base_url=x", "openai:gpt-4o?base_url=y")
    assert self_preference("hf:/models/Qwen2.5-VL-72B", "openai:qwen2.5-vl-7b?base_url=y")
    assert self_preference("openai:gpt-4o?base_url=x", "hf:/m/llava-1.5") is None


def test_a_user_rubric_file_from_the_command_line(run: Path, tmp_path: Path) -> None:
    rubric = tmp_path / "mine.toml"
    dims = "".join(
        f'[[dimensions]]\nname = "{name}"\ndescription = "d"\nweight = {weight}\n\n'
        for name, weight in (("consistency", 0), ("coherence", 0), ("visual_accuracy", 0),
                             ("ground_truth_correctness", 1))
    )  # fmt: skip
    rubric.write_text(f'instructions = "Grade it."\n\n{dims}', encoding="utf-8")
    with serve(judge_config(JudgeReplies())) as server:
        judged(
            run,
            "--judge",
            judge_spec(server.base_url),
            "--protocol",
            f"file:{rubric}",
            "--name",
            "mine",
        )
    folder = run / "judges" / "mine"
    spec = json.loads((folder / "judge.json").read_text())
    assert (
        spec["protocol"]["name"] == f"file:{rubric}"
        and spec["protocol"]["weights"]["coherence"] == 0
    )
    lines = judgement_lines(folder)
    points = [line["verdict"]["scores"]["ground_truth_correctness"] for line in lines]
    overall = report_json(run)["judges"]["mine"]["overall"]  # type: ignore[index]
    assert overall["n"] == 20 and overall["score"] == pytest.approx(np.mean(points) / 10)
