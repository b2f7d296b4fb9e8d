"""A cache that knows a new checkpoint (issue 44, item 4): a server restarted with another
checkpoint under the same served name and URL is asked for every item — whether its answers
differ from the cached ones on a few items (a sibling), on most (another model answering letters),
or only its identity says so (system fingerprint, the ``/v1/models`` entry). The same checkpoint
restarted keeps its cache after 21 live checks; an unreachable server leaves the cache answering,
and run.json and the summary say it was not checked. A judge stage whose server switched served
model is flagged like a run."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from cli_runs import invoke_run
from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.execution.cache_check import LIVE_CHECKS

N = 40


def bench(folder: Path) -> tuple[Path, dict[str, str]]:
    folder.mkdir(parents=True, exist_ok=True)
    golds = {f"q{i}": "ABCD"[i % 4] for i in range(N)}
    with open(folder / "bench.jsonl", "w") as handle:
        for key, gold in golds.items():
            item = {"id": key, "question": f"[[{key}]] Which finding?", "kind": "choice",
                    "options": {"A": "a", "B": "b", "C": "c", "D": "d"}, "answer": gold}  # fmt: skip
            handle.write(json.dumps(item) + "\n")
    return folder / "bench.jsonl", golds


def records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def checks_of(run: Path) -> list[dict[str, Any]]:
    return list(json.loads((run / "run.json").read_text())["cache_checks"])


def first_run(tmp_path: Path, config: ServerConfig) -> tuple[Path, int, str]:
    """The old checkpoint answers every item once: the data, its port and base URL."""
    data, _ = bench(tmp_path / "bench")
    with serve(config) as server:
        result = invoke_run(f"jsonl:{data}", model(server.base_url), tmp_path / "runs", "a")
        assert result.exit_code == 0, result.output
        return data, server.port, server.base_url


def said(needle: str, output: str) -> bool:
    """`needle` is in terminal output, whatever its line wrapping (spaces ignored)."""
    return "".join(needle.split()) in "".join(output.split())


def model(base_url: str) -> str:
    return f"openai:llava?base_url={base_url}&max_retries=0"


def old_checkpoint(golds: dict[str, str]) -> ServerConfig:
    return ServerConfig(gold=gold_by_marker(golds), accuracy=1.0, served_model="llava",
                        system_fingerprint="fp-1", model_root="/models/ckpt-1000")  # fmt: skip


@pytest.mark.parametrize(
    ("new", "difference"),
    [
        ({"accuracy": 0.8}, "the answer to a deterministic request differs"),  # a sibling
        ({"accuracy": 0.0}, "the answer to a deterministic request differs"),  # another model
        ({"system_fingerprint": "fp-2"}, "system fingerprint fp-1 → fp-2"),
        ({"model_root": "/models/ckpt-2000"}, "/v1/models root /models/ckpt-1000 → /models/ckpt-2000"),
    ],
)  # fmt: skip
def test_a_new_checkpoint_behind_the_old_name_and_url_is_asked_for_all_its_items(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, new: dict[str, Any], difference: str
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    _, golds = bench(tmp_path / "bench")
    data, port, base_url = first_run(tmp_path, old_checkpoint(golds))
    with serve(replace(old_checkpoint(golds), port=port, **new)) as server:
        assert server.base_url == base_url
        result = invoke_run(f"jsonl:{data}", model(base_url), tmp_path / "runs", "b")
        assert result.exit_code == 0, result.output
        assert server.stats["requests"] == N  # every item asked live, none read from the cache
    run = tmp_path / "runs" / "b"
    lines = [
        line for line in result.output.splitlines() if "no longer answers as its cached" in line
    ]
    assert len(lines) == 1 and difference in lines[0]
    (check,) = checks_of(run)
    assert check["result"] == "mismatch" and difference in check["differences"]
    assert check["asked_live"] <= LIVE_CHECKS and check["answered_from_cache"] == 0
    assert not any(r["cached"] for r in records(run))


def test_the_same_checkpoint_restarted_keeps_its_cache_after_the_live_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    _, golds = bench(tmp_path / "bench")
    data, port, base_url = first_run(tmp_path, old_checkpoint(golds))
    with serve(replace(old_checkpoint(golds), port=port)) as server:
        result = invoke_run(f"jsonl:{data}", model(base_url), tmp_path / "runs", "b")
        assert result.exit_code == 0 and server.stats["requests"] == LIVE_CHECKS
        assert server.stats["model_listings"] == 1  # /v1/models asked once per process
    run = tmp_path / "runs" / "b"
    (check,) = checks_of(run)
    assert check["result"] == "agreed" and check["agreed"] == check["asked_live"] == LIVE_CHECKS
    assert check["answered_from_cache"] == N - LIVE_CHECKS
    assert sum(r["cached"] for r in records(run)) == N - LIVE_CHECKS
    assert said("checked: 21 cached answers asked live again, all agreed", result.output)
    # the checks are spread over the run: every fourth question of each option letter
    asked = {r["id"] for r in records(run) if not r["cached"]}
    assert {golds[i] for i in asked} == set("ABCD")


def test_an_unreachable_server_at_check_time_leaves_the_cache_answering_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    _, golds = bench(tmp_path / "bench")
    data, _port, base_url = first_run(tmp_path, old_checkpoint(golds))  # the server is gone now
    result = invoke_run(f"jsonl:{data}", model(base_url), tmp_path / "runs", "b")
    assert result.exit_code == 0, result.output
    run = tmp_path / "runs" / "b"
    assert all(r["cached"] for r in records(run)) and len(records(run)) == N
    (check,) = checks_of(run)
    assert check["result"] == "not checked" and "connection" in check["reason"]
    assert check["answered_from_cache"] == N
    assert said("the response cache was not checked against", result.output)  # said at once
    assert said("NOT CHECKED against the server for 40 of them", result.output)  # and in the
    report = CliRunner().invoke(app, ["report", str(run)])  # summary, and in every report
    assert said("NOT CHECKED against the server for 40 of them", report.output)


def test_cache_check_is_explicit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEDLENS_CACHE", str(tmp_path / "cache"))
    _, golds = bench(tmp_path / "bench")
    data, port, base_url = first_run(tmp_path, old_checkpoint(golds))
    sibling = replace(old_checkpoint(golds), port=port, accuracy=0.0)
    with serve(sibling) as server:  # --cache-check 0 trusts the cache: nothing is asked
        result = invoke_run(f"jsonl:{data}", model(base_url), tmp_path / "runs", "b",
                            "--cache-check", "0")  # fmt: skip
        assert result.exit_code == 0 and server.stats["requests"] == 0
        (check,) = checks_of(tmp_path / "runs" / "b")
        assert check["result"] == "not checked" and "--cache-check 0" in check["reason"]
        asked = invoke_run(f"jsonl:{data}", model(base_url), tmp_path / "runs", "c",
                           "--cache-check", "3")  # fmt: skip
        assert asked.exit_code == 0 and server.stats["requests"] == N  # 1 check told, all asked
    bad = invoke_run(
        f"jsonl:{data}", model(base_url), tmp_path / "runs", "d", "--cache-check", "-1"
    )
    assert bad.exit_code == 2 and "--cache-check -1" in bad.output
    assert not (tmp_path / "runs" / "d").exists()


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
    report = CliRunner().invoke(app, ["report", str(run)])
    assert "the server-reported model changed within this stage" in report.output


def test_the_command_line_default_is_the_derived_number() -> None:
    import inspect

    from medlens.cli.run import run
    from medlens.execution.options import RunOptions

    assert inspect.signature(run).parameters["cache_check"].default == LIVE_CHECKS == 21
    assert RunOptions.__dataclass_fields__["cache_check"].default == LIVE_CHECKS
    assert 0.8**LIVE_CHECKS <= 0.01 < 0.8 ** (LIVE_CHECKS - 1)  # the smallest K for 99%
