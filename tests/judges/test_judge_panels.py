"""Judge panels (majority and mean by hand, ties unresolved), judges told apart by their server,
``--swap`` against a judge with total position bias, self-judging refused, and the bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner, Result

from judge_fixtures import finished_run, judge_spec, judgement_lines, write_open_bench
from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, serve
from medlens.cli import app


def judge(run: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["judge", str(run), *args])


def report_json(run: Path) -> dict:
    result = CliRunner().invoke(app, ["report", str(run), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)  # type: ignore[no-any-return]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return finished_run(tmp_path, n_open=20, n_closed=6)


def member_scores(panel: Path) -> dict[str, dict[str, float]]:
    """member → item → its score, from each member's own store (one repeat)."""
    out: dict[str, dict[str, float]] = {}
    for folder in sorted((panel / "members").iterdir()):
        out[folder.name] = {
            line["id"]: line["score"] for line in judgement_lines(folder) if line["status"] == "ok"
        }
    return out


def test_an_equivalence_panel_is_the_majority_of_its_members(run: Path) -> None:
    with (
        serve(judge_config(JudgeReplies())) as a,
        serve(judge_config(JudgeReplies("never"))) as b,
        serve(judge_config(JudgeReplies("noisy"))) as c,
    ):
        specs = [judge_spec(server.base_url) for server in (a, b, c)]
        result = judge(run, *[x for s in specs for x in ("--judge", s)], "--protocol",
                       "equivalence", "--name", "trio")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert [s.stats["requests"] for s in (a, b, c)] == [11, 11, 11]  # all three were asked
    panel = run / "judges" / "trio"
    scores = member_scores(panel)
    assert sorted(scores) == ["judge-model", "judge-model-2", "judge-model-3"]
    expected = {
        item: float(np.mean([scores[m][item] for m in scores]) > 0.5)
        for item in scores["judge-model"]
    }
    lines = {line["id"]: line for line in judgement_lines(panel)}
    assert {i: lines[i]["score"] for i in expected} == expected
    entry = report_json(run)["judges"]["trio"]
    assert entry["overall"]["score"] == pytest.approx(np.mean(list(expected.values())))
    members = entry["panel"]["members"]
    for name in scores:
        assert members[name]["overall"]["score"] == pytest.approx(
            np.mean(list(scores[name].values()))
        )
        assert members[name]["overall"]["calls"] == 11
    assert entry["overall"]["calls"] == 33
    pairs = entry["panel"]["agreement"]["dimensions"]["equivalent"]["pairs"]
    assert len(pairs) == 3 and {tuple(p["raters"]) for p in pairs} == {
        ("judge-model", "judge-model-2"), ("judge-model", "judge-model-3"),
        ("judge-model-2", "judge-model-3"),
    }  # fmt: skip
    members_json = json.loads((panel / "judge.json").read_text())["panel"]["members"]
    assert len({m["judge"] for m in members_json}) == 1  # one model name, three servers
    text = CliRunner().invoke(app, ["report", str(run), "--format", "md"]).output
    assert "Judge trio: panel members" in text and "judge-model-3" in text
    cost = CliRunner().invoke(app, ["cost", str(run), "--price", "input=1,output=1", "--json"])
    billed = json.loads(cost.output)["tokens"]["judges"]
    assert sorted(billed) == [f"trio/{m}" for m in scores]  # the members' calls, not the panel's
    assert all(billed[f"trio/{m}"]["input"] > 0 for m in scores)


def test_two_members_that_split_leave_the_item_unresolved(run: Path) -> None:
    with serve(judge_config(JudgeReplies())) as a, serve(judge_config(JudgeReplies("never"))) as b:
        result = judge(run, "--judge", judge_spec(a.base_url), "--judge", judge_spec(b.base_url),
                       "--protocol", "equivalence")  # fmt: skip
        assert result.exit_code == 0, result.output
    scores = member_scores(run / "judges" / "panel")
    first, second = scores["judge-model"], scores["judge-model-2"]
    split = {i for i in first if first[i] != second[i]}
    assert split  # the verdict judge says yes where the never judge says no
    lines = {line["id"]: line for line in judgement_lines(run / "judges" / "panel")}
    assert {i for i, line in lines.items() if line["status"] == "unresolved"} == split
    overall = report_json(run)["judges"]["panel"]["overall"]
    assert overall["judge_failures"] == {"unresolved": len(split)}
    assert overall["n"] == 20 - len(split)


def test_a_rubric_panel_is_the_mean_of_its_members(run: Path) -> None:
    with serve(judge_config(JudgeReplies())) as a, serve(judge_config(JudgeReplies("echo"))) as b:
        result = judge(run, "--judge", judge_spec(a.base_url), "--judge",
                       judge_spec(b.base_url, model="other-judge"), "--protocol", "rubric",
                       "--name", "duo")  # fmt: skip
        assert result.exit_code == 0, result.output
    scores = member_scores(run / "judges" / "duo")
    assert sorted(scores) == ["judge-model", "other-judge"]
    lines = {line["id"]: line for line in judgement_lines(run / "judges" / "duo")}
    for item, line in lines.items():
        assert line["score"] == pytest.approx((scores["judge-model"][item]
                                               + scores["other-judge"][item]) / 2)  # fmt: skip
    entry = report_json(run)["judges"]["duo"]
    assert entry["panel"]["combine"] == "mean"
    assert entry["overall"]["score"] == pytest.approx(np.mean([x["score"] for x in lines.values()]))
    assert set(entry["dimensions"]) == {
        "consistency", "coherence", "visual_accuracy", "ground_truth_correctness"
    }  # fmt: skip


def test_judges_on_two_ports_are_two_judges(run: Path) -> None:
    """One model name on two servers: neither judge answers from the other's cache."""
    with serve(judge_config(JudgeReplies())) as a, serve(judge_config(JudgeReplies("never"))) as b:
        for name, server in (("a", a), ("b", b)):
            result = judge(run, "--judge", judge_spec(server.base_url), "--protocol",
                           "equivalence", "--name", name)  # fmt: skip
            assert result.exit_code == 0, result.output
        assert a.stats["requests"] == 11 and b.stats["requests"] == 11
    verdicts = {
        name: {line["id"]: line["score"] for line in judgement_lines(run / "judges" / name)
               if line["by"] == "judge"}
        for name in ("a", "b")
    }  # fmt: skip
    assert set(verdicts["b"].values()) == {0.0} and 1.0 in verdicts["a"].values()
    judges = report_json(run)["judges"]
    assert judges["b"]["overall"]["cached_verdicts"] == 0
    assert (
        judges["a"]["judge_fingerprint"]["identity"] != judges["b"]["judge_fingerprint"]["identity"]
    )
    assert "inter_judge" in judges["a"] and "inter_judge_note" not in judges["b"]


def choice_run(tmp_path: Path, n: int = 6) -> Path:
    from cli_runs import named_run

    bench, predictions = tmp_path / "bench.jsonl", tmp_path / "predictions.csv"
    rows = ["index,prediction"]
    with open(bench, "w") as handle:
        for i in range(n):
            item = {"id": f"q{i}", "question": f"Which organ is in image {i}?", "kind": "choice",
                    "options": {"A": "liver", "B": "lung", "C": "heart"}, "answer": "B",
                    "meta": {"image_id": f"img{i}"}}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
            rows.append(f"q{i},Either the liver or the lung; on balance the lung")
    predictions.write_text("\n".join(rows) + "\n")
    return named_run(f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "c")


def test_swap_finds_a_judge_that_always_prefers_the_first_position(tmp_path: Path) -> None:
    run = choice_run(tmp_path)
    with serve(judge_config(JudgeReplies("first"))) as biased:
        result = judge(run, "--judge", judge_spec(biased.base_url), "--protocol", "choice",
                       "--swap", "--scope", "all", "--name", "biased")  # fmt: skip
        assert result.exit_code == 0, result.output
        assert biased.stats["requests"] == 12  # every item in both orders
    with serve(judge_config(JudgeReplies())) as fair:
        assert judge(run, "--judge", judge_spec(fair.base_url), "--protocol", "choice",
                     "--swap", "--scope", "all", "--name", "fair").exit_code == 0  # fmt: skip
    lines = judgement_lines(run / "judges" / "biased")
    assert sorted({line["order"] for line in lines}) == ["given", "swapped"]
    given = {line["id"]: line["verdict"]["answer"] for line in lines if line["order"] == "given"}
    swapped = {
        line["id"]: line["verdict"]["answer"] for line in lines if line["order"] == "swapped"
    }
    assert set(given.values()) == {"A"} and set(swapped.values()) == {"C"}
    judges = report_json(run)["judges"]
    bias = judges["biased"]["position_bias"]
    assert (bias["flips"], bias["pairs"], bias["rate"]) == (6, 6, 1.0)
    assert judges["biased"]["overall"]["n"] == 0  # no verdict survives a flip
    assert judges["biased"]["overall"]["judge_failures"] == {"order_flip": 6}
    fair_bias = judges["fair"]["position_bias"]
    assert (fair_bias["rate"], judges["fair"]["overall"]["score"]) == (0.0, 1.0)
    text = " ".join(CliRunner().invoke(app, ["report", str(run)]).output.split())
    assert "position bias of biased (--swap): 6 of 6 items read differently" in text


def model_run(tmp_path: Path, served: str | None = None) -> tuple[Path, ServerConfig]:
    """A run of the open benchmark answered by a loopback `openai:llava` server."""
    from cli_runs import named_run

    bench, _ = write_open_bench(tmp_path / "data", 6, 0)
    config = ServerConfig(reply=lambda request: "gas outside the bowel lumen", served_model=served)
    with serve(config) as server:
        spec = f"openai:llava?base_url={server.base_url}&max_retries=0"
        return named_run(f"jsonl:{bench}", spec, tmp_path / "runs", "llava"), config


def test_a_model_judging_itself_is_refused_unless_allowed(tmp_path: Path) -> None:
    run, _ = model_run(tmp_path)
    before = snapshot(run)
    with serve(judge_config(JudgeReplies())) as server:
        same_name = judge_spec(server.base_url, model="llava")
        refused = judge(run, "--judge", same_name, "--protocol", "equivalence")
        assert refused.exit_code == 2 and "judging its own answers is refused" in refused.output
        assert server.stats["requests"] == 0 and snapshot(run) == before
        allowed = judge(run, "--judge", same_name, "--protocol", "equivalence",
                        "--allow-self-judge")  # fmt: skip
        assert allowed.exit_code == 0, allowed.output
    entry = report_json(run)["judges"]["llava"]
    assert entry["self_judged"] is True
    assert "self-judged" in CliRunner().invoke(app, ["report", str(run)]).output


def test_a_judge_server_that_serves_the_evaluated_model_is_stopped(tmp_path: Path) -> None:
    run, _ = model_run(tmp_path)
    before = snapshot(run)
    with serve(judge_config(JudgeReplies(), served_model="llava")) as server:
        refused = judge(run, "--judge", judge_spec(server.base_url, model="judge-x"),
                        "--protocol", "equivalence")  # fmt: skip
    assert refused.exit_code == 2 and "answered as 'llava'" in refused.output
    assert snapshot(run) == before  # the new judge folder is gone again


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--judge", "J", "--judge", "J", "--protocol", "equivalence"], "given twice"),
        (["--judge", "J", "--protocol", "equivalence", "--swap"], "no order to swap"),
        (["--judge", "J", "--protocol", "rubric", "--swap"], "no order to swap"),
        (["--protocol", "equivalence", "--allow-self-judge"], "--allow-self-judge needs a judge"),
        (["--protocol", "equivalence"], "give --judge SPEC"),
    ],
)
def test_bad_panel_and_swap_input_is_one_line_and_writes_nothing(
    run: Path, args: list[str], message: str
) -> None:
    before = snapshot(run)
    spec = judge_spec("http://127.0.0.1:9/v1")
    result = judge(run, *[spec if a == "J" else a for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.output and len(result.output.strip().splitlines()) == 1
    assert snapshot(run) == before


def test_run_refuses_allow_self_judge_without_a_judge(tmp_path: Path) -> None:
    from cli_runs import invoke_run

    bench, predictions = write_open_bench(tmp_path / "data", 4, 0)
    result = invoke_run(f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "r",
                        "--allow-self-judge")  # fmt: skip
    assert result.exit_code == 2 and "--allow-self-judge needs a judge" in result.output
    assert not (tmp_path / "runs").exists()


def test_run_refuses_a_judge_naming_the_model_before_answering(tmp_path: Path) -> None:
    from cli_runs import invoke_run

    bench, _ = write_open_bench(tmp_path / "data", 4, 0)
    with serve(ServerConfig(reply=lambda request: "femur")) as server:
        model = f"openai:llava?base_url={server.base_url}&max_retries=0"
        result = invoke_run(f"jsonl:{bench}", model, tmp_path / "runs", "r", "--judge",
                            judge_spec(server.base_url, model="llava"))  # fmt: skip
        assert result.exit_code == 2 and "judging its own answers is refused" in result.output
        assert server.stats["requests"] == 0 and not (tmp_path / "runs").exists()


def test_a_stop_keeps_every_members_calls_in_flight(run: Path) -> None:
    """A caller's StopAfterInFlight (a study's budget) during a panel: no member asks anything
    new, each stores the calls it had in flight (none dropped), and a rerun asks only the rest.
    Each judge answers its first call at once and holds the others until the stop."""
    from medlens.core.errors import StopAfterInFlight
    from medlens.core.specs import parse_spec
    from medlens.judges.options import JudgeOptions
    from medlens.judges.stage import judge_run

    replies = [JudgeReplies(gate_after=1), JudgeReplies(gate_after=1)]

    def stop_at_once(line: object) -> None:
        for reply in replies:
            reply.release.set()  # the held calls answer now: they are in flight at the stop
        raise StopAfterInFlight("budget: stop")

    with serve(judge_config(replies[0])) as a, serve(judge_config(replies[1])) as b:
        specs = tuple(parse_spec(judge_spec(s.base_url)) for s in (a, b))
        options = JudgeOptions(run, specs[0], "equivalence", name="duo", panel=specs,
                               concurrency=3, cache=False)  # fmt: skip
        with pytest.raises(StopAfterInFlight):
            judge_run(options, on_progress=stop_at_once)
        members = sorted((run / "judges" / "duo" / "members").iterdir())
        stored = [sum(x["by"] == "judge" for x in judgement_lines(f)) for f in members]
        assert sum(stored) < 22 and min(stored) >= 1  # both members answered, then stopped
        judge_run(options)
        # every call answered before the stop was kept: the rerun asks each item once in all
        assert [s.stats["requests"] for s in (a, b)] == [11, 11]
