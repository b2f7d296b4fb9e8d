"""`medlens judge --executor ray` on a local 2-CPU Ray cluster gives the local stage's verdicts."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from judge_fixtures import finished_run, judge_spec, judgement_lines
from judge_server import JudgeReplies, judge_config
from loopback_server import serve
from medlens.cli import app

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_judges_like_the_local_runner(tmp_path: Path) -> None:
    run = finished_run(tmp_path, n_open=40, n_closed=0)
    with serve(judge_config(JudgeReplies())) as server:
        base = ["judge", str(run), "--judge", judge_spec(server.base_url), "--protocol", "rubric"]
        local = CliRunner().invoke(app, [*base, "--name", "local", "--no-cache"])
        assert local.exit_code == 0, local.output
        remote = CliRunner().invoke(
            app, [*base, "--name", "ray", "--executor", "ray", "--no-cache"]
        )
        assert remote.exit_code == 0, remote.output
        assert server.stats["requests"] == 80

    def verdicts(name: str) -> dict[str, object]:
        return {line["id"]: line["verdict"] for line in judgement_lines(run / "judges" / name)}  # type: ignore[misc]

    assert verdicts("ray") == verdicts("local") and len(verdicts("ray")) == 40


@pytest.mark.slow
def test_a_stop_keeps_the_judgements_ray_workers_had_in_flight(tmp_path: Path) -> None:
    """A caller's StopAfterInFlight (a study's budget) on a Ray judge stage: every call the
    judge answered is stored (none dropped with a killed worker); a rerun asks only the rest."""
    from medlens.core.errors import StopAfterInFlight
    from medlens.core.specs import parse_spec
    from medlens.judges.options import JudgeOptions
    from medlens.judges.stage import judge_run

    def stop_at_once(line: object) -> None:
        raise StopAfterInFlight("budget: stop")

    run = finished_run(tmp_path, n_open=40, n_closed=0)
    with serve(judge_config(JudgeReplies(), latency=0.02)) as server:
        options = JudgeOptions(run, parse_spec(judge_spec(server.base_url)), "rubric",
                               concurrency=2, cache=False, executor="ray")  # fmt: skip
        with pytest.raises(StopAfterInFlight, match="budget: stop"):
            judge_run(options, on_progress=stop_at_once)
        (folder,) = (run / "judges").iterdir()
        stored = judgement_lines(folder)
        assert 0 < len(stored) < 40
        assert server.stats["requests"] == len(stored)  # every answered call kept
        judge_run(options)
        assert server.stats["requests"] == 40
    assert len(judgement_lines(folder)) == 40
