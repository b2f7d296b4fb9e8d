"""--budget against loopback servers that report token usage: the study stops cleanly before a
run would push the projected total over the budget (saying which), stops a run whose measured
spend passes it, resumes with a larger budget; --dry-run projects from measured costs with the
Student-t interval of `medlens cost`, checked here against scipy."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner, Result

from judge_server import judge_config, verdict
from loopback_server import ChatRequest, ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.study.conduct import dry_run, prepare_study
from medlens.study.file import load_study
from medlens.study.plan import StudySettings
from study_fixtures import openai_spec, record_ids, records, write_shared_bench, write_study

PRICE = "input=10000,output=10000"
"""USD per 1M tokens: about $1.25 per item of these prompts (large, to make a few items count)."""


def invoke(path: Path, out: Path, *extra: str) -> Result:
    args = ["study", str(path), "--out", str(out), "--no-reports", "--no-cache",
            "--concurrency", "2", *extra]  # fmt: skip
    return CliRunner().invoke(app, args)


def item_costs(run_dir: Path) -> list[float]:
    """What each record cost, by hand: (prompt + completion tokens) × 10000 USD per 1M."""
    return [(r["usage"]["prompt_tokens"] + r["usage"]["completion_tokens"]) * 10000 / 1e6
            for r in records(run_dir).values()]  # fmt: skip


def test_the_study_stops_before_a_run_would_pass_the_budget_and_resumes(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 10, 2)
    out = tmp_path / "studies"
    with (
        serve(ServerConfig(gold=gold_by_marker(golds))) as s0,
        serve(ServerConfig(gold=gold_by_marker(golds))) as s1,
    ):
        models = {f"m{i}": {"spec": openai_spec(s.base_url, f"m{i}"), "price": PRICE}
                  for i, s in enumerate((s0, s1))}  # fmt: skip
        path = write_study(tmp_path / "b.toml", "b", models, {"a": bench})
        result = invoke(path, out, "--budget", "30")
        assert result.exit_code == 3, result.output
        text = " ".join(result.output.split())
        assert "budget: stopping before run m1--a" in text and "> budget $30.00" in text
        assert s1.stats["requests"] == 0
        runs = out / "b" / "runs"
        assert len(record_ids(runs / "m0--a")) == 10 and not (runs / "m1--a").exists()
        record = json.loads((out / "b" / "study.json").read_text())
        assert record["runs"]["m1--a"]["state"] == "pending"
        assert "pending │ 0/10 │" in text  # not started: none of its 10 items, not –/–
        assert "stopping before run m1--a" in record["stop"]["message"]
        assert record["cost"]["spent"] == sum(item_costs(runs / "m0--a"))
        done_before = (runs / "m0--a" / "records.jsonl").read_bytes()
        again = invoke(path, out, "--budget", "100")
        assert again.exit_code == 0, again.output
        assert s0.stats["requests"] == 10 and s1.stats["requests"] == 10
    assert (runs / "m0--a" / "records.jsonl").read_bytes() == done_before
    assert json.loads((out / "b" / "study.json").read_text())["stop"] is None


def test_a_run_whose_measured_spend_passes_the_budget_stops_and_resumes(tmp_path: Path) -> None:
    bench, _ = write_shared_bench(tmp_path / "a", 12, 3)
    out = tmp_path / "studies"
    long_answers = ServerConfig(reply=lambda request: "x" * 4000)  # 1,000 output tokens each
    with serve(long_answers) as server:
        model = {"spec": openai_spec(server.base_url), "price": PRICE}
        path = write_study(tmp_path / "n.toml", "n", {"long": model}, {"a": bench})
        result = invoke(path, out, "--budget", "30")
        assert result.exit_code == 3, result.output
        text = " ".join(result.output.split())
        assert "over the budget of $30.00, while long--a was answering" in text
        run = out / "n" / "runs" / "long--a"
        answered = [r for r in records(run).values() if r["error"] is None]
        spent = sum(item_costs(run)[: len(answered)])
        assert spent > 30 and len(answered) < 12
        # the answer in flight when the budget was passed is paid for: it is kept, not dropped
        assert server.stats["requests"] == len(records(run))
        record = json.loads((out / "n" / "study.json").read_text())
        state = record["runs"]["long--a"]
        assert state["state"] == "stopped"
        assert (state["answered"], state["items"]) == (len(answered), 12)
        assert f"stopped │ {len(answered)}/12 │" in text  # the summary table: records of total
        assert_spent_figures_agree(text, record["cost"])
        page = " ".join((out / "n" / "study.md").read_text().split())
        assert "when the budget was passed" in page and page.count("rerun") == 1
        assert invoke(path, out, "--budget", "1000").exit_code == 0
    ids = record_ids(run)
    assert sorted(ids) == sorted(f"q{i}" for i in range(12))


def assert_spent_figures_agree(text: str, cost: dict[str, float], budget: str = "30.00") -> None:
    """The stop message and the final `spent` line tell one story: spent when the budget was
    passed + the answers then in flight (kept) = the final spend, which study.json records."""
    found = re.search(r"budget: \$([\d.]+) spent, over the budget of \$" + re.escape(budget) + r", while \S+ was "
                      r"answering; no new request was sent; the (\d+) answers? that came in after "
                      r"it were kept \(paid for: \$([\d.]+) more, \$([\d.]+) spent in all\)", text)  # fmt: skip
    assert found, text
    at, kept, more, total = float(found[1]), int(found[2]), float(found[3]), float(found[4])
    assert kept >= 1 and at + more == pytest.approx(total, abs=2e-4)
    assert total == pytest.approx(cost["spent"], abs=1e-4) and at > float(budget)
    answers = "answer" if kept == 1 else "answers"
    assert (f"spent: ${total:.4f} of a ${budget} budget (${at:.4f} when the budget was passed + "
            f"${more:.4f} for the {kept} {answers} that came in after)") in text  # fmt: skip
    assert text.count(found[0]) == 2  # the job's line and the closing `stopped:` line agree


def vary_question_lengths(bench: str) -> None:
    """Pad each question by a different number of words, so prompts differ in length by more
    than the loopback server's 4 characters per token (the interval needs spread costs)."""
    path = Path(bench.partition(":")[2])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for index, row in enumerate(rows):
        row["question"] += " Describe it." * (index % 4)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_dry_run_projects_from_measured_costs_with_a_t_interval(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 20, 4)
    vary_question_lengths(bench)
    out = tmp_path / "studies"
    with serve(ServerConfig(gold=gold_by_marker(golds))) as server:
        model = {"spec": openai_spec(server.base_url), "price": PRICE}
        path = write_study(tmp_path / "d.toml", "d", {"m": model},
                           {"a": {"spec": bench, "limit": 8}})  # fmt: skip
        assert invoke(path, out).exit_code == 0
        path = write_study(tmp_path / "d.toml", "d", {"m": model}, {"a": bench})  # limit lifted
        prepared = prepare_study(load_study(path), StudySettings(out=out, cache=False))
        (row,) = dry_run(prepared)
        assert (row.selected, row.to_send, row.state) == (20, 12, "partial")
        costs = np.array(item_costs(out / "d" / "runs" / "m--a"))
        assert costs.std() > 0  # prompts of different lengths: the interval has a width
        assert row.projection.measured == 8
        assert row.projection.cost == approx(12 * costs.mean())
        half = stats.t.ppf(0.975, 7) * costs.std(ddof=1) / np.sqrt(8) * 12
        assert row.projection.half_width == approx(half)
        assert prepared.costs.spent == approx(costs.sum())
        shown = invoke(path, out, "--dry-run")
        assert shown.exit_code == 0 and "95% CI" in shown.output
        assert server.stats["requests"] == 8  # the dry run called nothing


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-9, abs=1e-12)


def test_a_chain_of_thought_run_is_projected_with_reasoning_length_answers(tmp_path: Path) -> None:
    """Before anything is measured, a cot benchmark's answers are estimated at 512 output tokens
    (as `run --dry-run` and `cost` estimate them), a zero-shot one's at 64."""
    bench, _ = write_shared_bench(tmp_path / "a", 6, 2)
    model = {"spec": openai_spec("http://127.0.0.1:9/v1"), "price": PRICE}
    path = write_study(tmp_path / "c.toml", "c", {"m": model},
                       {"plain": bench, "cot": {"spec": bench, "strategy": "cot"}})  # fmt: skip
    prepared = prepare_study(load_study(path), StudySettings(out=tmp_path / "studies"))
    rows = {row.key: row for row in dry_run(prepared)}
    plain, cot = rows["m--plain"].projection.cost, rows["m--cot"].projection.cost
    answers = 6 * (512 - 64) * 10000 / 1e6  # the output tokens' difference, in USD
    assert answers <= cot - plain < answers + 6 * 1.0  # + cot's longer prompt (< 100 tokens)


def long_verdict(request: ChatRequest) -> str:
    """The judge's verdict with a 1,000-token reason: its calls cost more than projected."""
    return json.dumps({**verdict(request), "reason": "y" * 4000})


def test_a_judge_whose_spend_passes_the_budget_keeps_its_calls_in_flight(tmp_path: Path) -> None:
    bench, _ = write_shared_bench(tmp_path / "a", 12, 3, kinds=("open",))
    out = tmp_path / "studies"
    paraphrase = ServerConfig(reply=lambda request: "The image shows a finding.")  # not exact
    with serve(paraphrase) as server, serve(judge_config(long_verdict)) as judge:
        model = {"spec": openai_spec(server.base_url), "price": "input=0,output=0"}
        judges = {"eq": {"spec": openai_spec(judge.base_url, "judge"),
                         "protocol": "equivalence", "price": PRICE}}  # fmt: skip
        path = write_study(tmp_path / "j.toml", "j", {"m": model}, {"a": bench}, judges=judges)
        result = invoke(path, out, "--budget", "40")
        assert result.exit_code == 3, result.output
        assert "while m--a/eq was answering" in " ".join(result.output.split())
        folder = out / "j" / "runs" / "m--a" / "judges" / "eq"
        judged = [json.loads(x) for x in (folder / "judgements.jsonl").read_text().splitlines()]
        assert 0 < len(judged) < 12 and all(x["by"] == "judge" for x in judged)
        # every judge call that was answered (paid for) is stored, none dropped in flight
        assert judge.stats["requests"] == len(judged)
        record = json.loads((out / "j" / "study.json").read_text())
        assert record["judges"]["m--a/eq"]["state"] == "stopped"
        text = " ".join(result.output.split())
        assert f"eq stopped {len(judged)}/12 judged" in text
        assert_spent_figures_agree(text, record["cost"], "40.00")
        calls_before = judge.stats["requests"]
        assert invoke(path, out, "--budget", "1000").exit_code == 0
        assert judge.stats["requests"] - calls_before == 12 - len(judged)  # nothing asked twice
    judged = [json.loads(x) for x in (folder / "judgements.jsonl").read_text().splitlines()]
    assert sorted(x["id"] for x in judged) == sorted(f"q{i}" for i in range(12))
