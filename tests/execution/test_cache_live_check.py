"""The cache checks answers, not names (issue 30, item 3): a server restarted with another
checkpoint under the same served name and port answers a deterministic request otherwise than
its cache entries; the run asks everything live, says so in one line and records it in
run.json. A judge stage whose server switched served model is flagged like a run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app

N = 8


def bench(folder: Path) -> tuple[Path, dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(N)}
    with open(folder / "bench.jsonl", "w") as handle:
        for key, gold in golds.items():
            item = {"id": key, "question": f"[[{key}]] Which finding?", "kind": "choice",
                    "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": gold}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    return folder / "bench.jsonl", golds


def score(run: Path) -> float:
    return float(json.loads((run / "results.json").read_text())["overall"]["score"])


@pytest.mark.parametrize(
    ("second", "said"),
    [({"accuracy": 0.0}, "the answer to a deterministic request differs"),
     ({"system_fingerprint": "fp-2"}, "system fingerprint fp-1 → fp-2")],
)  # fmt: skip
def test_a_new_checkpoint_under_the_old_name_and_port_is_not_answered_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, second: dict[str, object], said: str
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    data, golds = bench(tmp_path / "bench")
    old = ServerConfig(
        gold=gold_by_marker(golds), accuracy=1.0, served_model="llava", system_fingerprint="fp-1"
    )
    with serve(old) as server:
        port, base_url = server.port, server.base_url
        first = invoke_run(
            f"jsonl:{data}", f"openai:llava?base_url={base_url}", tmp_path / "runs", "a"
        )
        assert first.exit_code == 0, first.output
    with serve(replace(old, port=port, **second)) as server:  # type: ignore[arg-type]
        assert server.base_url == base_url
        result = invoke_run(
            f"jsonl:{data}", f"openai:llava?base_url={base_url}", tmp_path / "runs", "b"
        )
        assert result.exit_code == 0, result.output
        assert server.stats["requests"] == N  # every item asked live, none read from the cache
    run = tmp_path / "runs" / "b"
    lines = [
        line for line in result.output.splitlines() if "no longer answers as its cached" in line
    ]
    assert len(lines) == 1 and said in lines[0]
    checks = json.loads((run / "run.json").read_text())["cache_checks"]
    assert (
        len(checks) == 1 and checks[0]["result"] == "mismatch" and said in checks[0]["differences"]
    )
    records = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert not any(r["cached"] for r in records)
    if "accuracy" in second:
        assert score(tmp_path / "runs" / "a") == 1.0 and score(run) == 0.0


def test_the_same_checkpoint_restarted_keeps_its_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    data, golds = bench(tmp_path / "bench")
    config = ServerConfig(
        gold=gold_by_marker(golds), served_model="llava", system_fingerprint="fp-1"
    )
    with serve(config) as server:
        port, base_url = server.port, server.base_url
        assert (
            invoke_run(
                f"jsonl:{data}", f"openai:llava?base_url={base_url}", tmp_path / "runs", "a"
            ).exit_code
            == 0
        )
    with serve(replace(config, port=port)) as server:
        result = invoke_run(
            f"jsonl:{data}", f"openai:llava?base_url={base_url}", tmp_path / "runs", "b"
        )
        assert result.exit_code == 0 and server.stats["requests"] == 1  # the one live check
    assert "cache_checks" not in json.loads((tmp_path / "runs" / "b" / "run.json").read_text())


def test_a_judge_stage_whose_served_model_switched_is_flagged(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=80, n_closed=0)
    first = judge_config(JudgeReplies("faults"), served_model="judge-ckpt-1")
    with serve(first) as server:
        port, base_url = server.port, server.base_url
        args = ["judge", str(run), "--judge", judge_spec(base_url, max_retries="0"), "--protocol", "equivalence",
                "--scope", "all", "--retry-errors"]  # fmt: skip
        assert CliRunner().invoke(app, args).exit_code == 0
    with serve(
        replace(judge_config(JudgeReplies("verdict")), served_model="judge-ckpt-2", port=port)
    ):
        resumed = CliRunner().invoke(app, args)  # the failed judgements are asked again
    assert resumed.exit_code == 0, resumed.output
    served = {line.get("served_model") for line in judgement_lines(run / "judges" / "judge-model")}
    assert {"judge-ckpt-1", "judge-ckpt-2"} <= served
    assert (
        "judge judge-model: the server-reported model changed within this stage" in resumed.stderr
    )
    report = CliRunner().invoke(app, ["report", str(run)]).output
    assert "the server-reported model changed within this stage" in report
