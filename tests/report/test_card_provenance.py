"""Provenance says what was sent: the generation parameters of the requests a loopback server
received, self-consistency's temperature and seeds, no "official" label on replayed answers,
`runs` with its selection and a short benchmark label, and `cost` projections that fit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from board_runs import one_error_line
from cli_runs import named_run
from gmai_fixture import write_gmai_tsv
from judge_fixtures import judge_spec, write_open_bench
from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, serve
from medlens.cli import app
from medlens.report.card import protocol_card
from provenance_fixture import write_choice_benchmark

runner = CliRunner()


def rows(run: Path) -> dict[str, str]:
    return dict(protocol_card(run).rows)


def test_the_card_shows_the_generation_parameters_the_server_received(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path, 4)
    with serve(ServerConfig()) as server:
        spec = f"openai:m?base_url={server.base_url}&max_tokens=300&seed=7"
        run = named_run(f"jsonl:{bench}", spec, tmp_path / "runs", "sent")
        body = server.last_body
        plain = named_run(f"jsonl:{bench}", f"openai:m?base_url={server.base_url}",
                          tmp_path / "runs", "plain")  # fmt: skip
    assert body is not None
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 300, 7)
    assert rows(run)["generation parameters"] == "temperature 0, max_tokens 300, seed 7"
    assert rows(plain)["generation parameters"] == (
        "temperature 0; max_tokens, seed: not sent (the server's defaults)"
    )


def test_self_consistency_shows_its_temperature_and_seeds(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path, 3)
    with serve(ServerConfig()) as server:
        spec = f"openai:m?base_url={server.base_url}"
        run = named_run(f"jsonl:{bench}", spec, tmp_path / "runs", "sc",
                        "--strategy", "self-consistency:3", "--seed", "2")  # fmt: skip
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert [s["seed"] for s in records[0]["samples"]] == [2000, 2001, 2002]
    assert rows(run)["self-consistency"] == (
        "3 draws per item at temperature 0.7, seeds 2000–2002 (run seed × 1000 + draw)"
    )


def test_a_replayed_run_is_never_labelled_official(tmp_path: Path) -> None:
    tsv = tmp_path / "GMAI_VAL.tsv"
    write_gmai_tsv(tsv, n_rows=8)
    predictions = tmp_path / "p.csv"
    ids = [line.split("\t", 1)[0] for line in tsv.read_text().splitlines()[1:]]
    predictions.write_text("index,prediction\n" + "".join(f"{i},A\n" for i in ids))
    run = named_run(f"gmai:{tsv}", f"replay:{predictions}", tmp_path / "runs", "replayed",
                    "--prompt", "vlmeval", "--extract", "vlmeval")  # fmt: skip
    card = protocol_card(run)
    assert card.official is not True
    assert "official" not in card.marker.replace("non-official", "")
    assert "replayed" in card.marker and "sent no prompt" in card.marker
    assert rows(run)["generation parameters"].startswith("none sent: replayed answers")


def test_runs_lists_the_selection_and_a_short_benchmark_label(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path / "a" / "deep" / "folder", 12, {"modality": "CT"})
    named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "sampled", "--sample", "5")
    named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "whole")
    listed = {
        r["name"]: r
        for r in json.loads(runner.invoke(app, ["runs", str(tmp_path / "runs"), "--json"]).stdout)
    }
    assert listed["sampled"]["benchmark_label"] == "jsonl:bench.jsonl"
    assert listed["sampled"]["selection"] == "5 of 12 items: sample 5, seed 0"
    assert listed["whole"]["selection"] == "all items"
    text = runner.invoke(app, ["runs", str(tmp_path / "runs")]).stdout
    print(text)
    assert "jsonl:bench.jsonl" in text and "sample 5, seed 0" in text
    assert str(tmp_path / "a") not in text


def test_judge_cost_is_projected_over_the_items_the_judge_covers(tmp_path: Path) -> None:
    """10 closed items first, then 20 open ones; the run answers the first 16 (6 open) and the
    judge covers only open items: the benchmark's judge cost is 20 × the mean per open item."""
    bench, predictions = write_open_bench(tmp_path / "data", n_open=20, n_closed=10)
    lines = bench.read_text().splitlines()
    bench.write_text("\n".join(lines[20:] + lines[:20]) + "\n")
    run = named_run(f"jsonl:{bench}", f"replay:{predictions}", tmp_path / "runs", "r",
                    "--limit", "16")  # fmt: skip
    with serve(judge_config(JudgeReplies())) as server:
        result = runner.invoke(app, ["judge", str(run), "--judge", judge_spec(server.base_url),
                                     "--protocol", "equivalence", "--scope", "all"])  # fmt: skip
        assert result.exit_code == 0, result.output
    cost = json.loads(
        runner.invoke(app, ["cost", str(run), "--price", "input=1,output=1", "--json"]).stdout
    )
    judge_lines = [
        json.loads(x)
        for x in next((run / "judges").glob("*/judgements.jsonl")).read_text().splitlines()
    ]
    covered = {line["id"] for line in judge_lines}
    assert covered == {f"o{i}" for i in range(6)}
    spent = (
        sum(
            line["usage"]["prompt_tokens"] + line["usage"]["completion_tokens"]
            for line in judge_lines
        )
        / 1e6
    )
    projected = cost["projected"]["judges"]
    assert projected["covers"] == {"items": 20, "sample": 6, "kinds": ["open"]}
    assert projected["cost"] == pytest.approx(20 * spent / 6)


@pytest.mark.parametrize("price", ["input=1e308,output=1", "input=1,output=1e300"])
def test_prices_that_overflow_are_refused(tmp_path: Path, price: str) -> None:
    bench = write_choice_benchmark(tmp_path, 2)
    run = named_run(f"jsonl:{bench}", "random", tmp_path / "runs", "r")
    line = one_error_line(runner.invoke(app, ["cost", str(run), "--price", price]))
    assert "at most 1,000,000 USD per 1M tokens" in line


def test_chain_of_thought_estimates_use_a_reasoning_length_output(tmp_path: Path) -> None:
    bench = write_choice_benchmark(tmp_path, 4)
    args = ["run", "--bench", f"jsonl:{bench}", "--model", "openai:m?base_url=http://127.0.0.1:9/v1",
            "--out", str(tmp_path / "runs"), "--dry-run", "--price", "input=1,output=1"]  # fmt: skip
    plain = runner.invoke(app, args).stdout
    cot = runner.invoke(app, [*args, "--strategy", "cot"]).stdout
    assert "64 output tokens per answer" in plain
    assert "512 output tokens per answer (a reasoning answer)" in cot
