"""base_url is transport in a study as in `run`: the same server moved to another port continues
the study (and its judges); a changed model or request option is still refused."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from medlens.study.record import comparable
from study_fixtures import openai_spec, record_ids, write_shared_bench, write_study


def invoke(path: Path, out: Path) -> Result:
    return CliRunner().invoke(app, ["study", str(path), "--out", str(out), "--no-reports"])


def test_a_moved_server_continues_the_study(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 8, 2)
    out = tmp_path / "studies"
    config = ServerConfig(gold=gold_by_marker(golds))
    with serve(config) as first:
        models = {"m": openai_spec(first.base_url)}
        path = write_study(tmp_path / "t.toml", "t", models, {"a": {"spec": bench, "limit": 4}})
        assert invoke(path, out).exit_code == 0
    run = out / "t" / "runs" / "m--a"
    assert len(record_ids(run)) == 4
    with serve(config) as moved:  # another port, and the limit lifted
        models = {"m": openai_spec(moved.base_url, read_timeout="30")}
        path = write_study(tmp_path / "t.toml", "t", models, {"a": bench})
        again = invoke(path, out)
        assert again.exit_code == 0, again.output
        assert moved.stats["requests"] == 4  # only the items not answered before
    assert sorted(record_ids(run)) == sorted(golds)
    with serve(config) as other:  # another model name is another model: refused
        path = write_study(tmp_path / "t.toml", "t", {"m": openai_spec(other.base_url, "x")},
                           {"a": bench})  # fmt: skip
        refused = invoke(path, out)
    assert refused.exit_code == 2 and "changed since the study began" in refused.output


def test_a_study_recorded_with_base_url_in_its_identity_still_resumes() -> None:
    old = {
        "seed": 0,
        "models": {"m": {"spec": "openai:m?base_url=http://h:1/v1&temperature=0&max_retries=2"}},
        "judges": {"j": {"spec": "openai:j?base_url=http://h:2/v1", "protocol": "equivalence"}},
        "benchmarks": {"a": {"spec": "demo"}},
    }
    assert comparable(old) == {
        "seed": 0,
        "models": {"m": {"spec": "openai:m?temperature=0"}},
        "judges": {"j": {"spec": "openai:j", "protocol": "equivalence"}},
        "benchmarks": {"a": {"spec": "demo"}},
    }
    assert json.dumps(comparable({"seed": 1})) == '{"seed": 1}'


def test_board_across_takes_one_model_served_from_two_ports_as_one_model(tmp_path: Path) -> None:
    from board_runs import invoke_board
    from cli_runs import named_run

    bench_a, golds_a = write_shared_bench(tmp_path / "a", 6, 2)
    bench_b, golds_b = write_shared_bench(tmp_path / "b", 6, 2, prefix="r")
    runs = tmp_path / "runs"
    for name, bench, golds in (("m-a", bench_a, golds_a), ("m-b", bench_b, golds_b)):
        with serve(ServerConfig(gold=gold_by_marker(golds))) as server:  # a new port each time
            named_run(bench, openai_spec(server.base_url), runs, name, "--no-cache")
    result = invoke_board(runs / "m-a", runs / "m-b", "--across", "--json")
    assert result.exit_code == 0, result.output
    across = json.loads(result.stdout)["across"]
    assert len(across["models"]) == 1 and len(across["cells"]) == 2
