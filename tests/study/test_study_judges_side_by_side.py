"""Several judge stages of one run judge at the same time, and a study killed while they do
resumes to the verdicts a study never killed gives (issue 49: a study with two or more judges on
one benchmark failed on its own run lock, 3 of 3 tries).

Side by side is forced, not hoped for: each judge server holds its answers until the next judge
server has been asked something (events, not sleeps), so a study whose judges took turns or
failed on a lock could not finish.
"""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from judge_server import JudgeReplies, judge_config
from loopback_server import ServerConfig, gold_by_marker, serve
from medlens.cli import app
from study_fixtures import openai_spec, start_study, wait_for, write_shared_bench, write_study

HELD_FOR = 60.0
"""A held judge server gives up after this long: only reached if the claim is false."""
PROTOCOLS = {"eq": "equivalence", "eq2": "equivalence", "rubric": "rubric"}


def study_args(study: Path, out: Path) -> list[str]:
    return ["study", str(study), "--out", str(out), "--no-reports", "--no-cache",
            "--concurrency", "2"]  # fmt: skip


def judge_lines(folder: Path) -> list[dict[str, Any]]:
    path = folder / "judgements.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def verdicts(run: Path) -> dict[str, dict[tuple[str, int], tuple[Any, ...]]]:
    """Each stage's verdict per (item, repeat), without what is measured (latency, usage)."""
    return {
        name: {(line["id"], line["repeat"]): (line["status"], line["score"], line["verdict"],
                                               line["by"])
               for line in judge_lines(run / "judges" / name)}
        for name in PROTOCOLS
    }  # fmt: skip


def write_judged_study(tmp_path: Path, model: str, judges: list[str], bench: str) -> Path:
    return write_study(
        tmp_path / "s.toml", "s", {"m": openai_spec(model)}, {"a": bench},
        judges={name: {"spec": openai_spec(url, f"judge-{name}"), "protocol": protocol}
                for (name, protocol), url in zip(PROTOCOLS.items(), judges, strict=True)},
    )  # fmt: skip


def test_three_judges_of_one_run_judge_side_by_side(tmp_path: Path) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 12, 3, kinds=("open",))
    second_asked, third_asked = threading.Event(), threading.Event()
    configs = [
        judge_config(JudgeReplies(), hold=second_asked, lifetime=HELD_FOR),
        judge_config(JudgeReplies(), arrived=second_asked, hold=third_asked, lifetime=HELD_FOR),
        judge_config(JudgeReplies(), arrived=third_asked),
    ]
    with (
        serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.5)) as model,
        serve(configs[0]) as j0,
        serve(configs[1]) as j1,
        serve(configs[2]) as j2,
    ):
        study = write_judged_study(tmp_path, model.base_url, [j.base_url for j in (j0, j1, j2)],
                                   bench)  # fmt: skip
        result = CliRunner().invoke(app, study_args(study, tmp_path / "studies"))
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "studies" / "s" / "study.json").read_text())
    assert {key: judge["state"] for key, judge in record["judges"].items()} == {
        f"m--a/{name}": "done" for name in PROTOCOLS
    }
    run = tmp_path / "studies" / "s" / "runs" / "m--a"
    results = json.loads((run / "results.json").read_text())
    assert set(results["judges"]) == set(PROTOCOLS)  # the last stage to end wrote them all
    for name in PROTOCOLS:
        assert results["judges"][name]["overall"]["n"] == 12


def test_a_study_killed_while_its_judges_judge_side_by_side_resumes_to_the_same_verdicts(
    tmp_path: Path,
) -> None:
    bench, golds = write_shared_bench(tmp_path / "a", 16, 4, kinds=("open",))
    replies = [JudgeReplies(gate_after=3) for _ in PROTOCOLS]
    with (
        serve(ServerConfig(gold=gold_by_marker(golds), accuracy=0.5)) as model,
        serve(judge_config(replies[0])) as j0,
        serve(judge_config(replies[1])) as j1,
        serve(judge_config(replies[2])) as j2,
    ):
        judges = [j.base_url for j in (j0, j1, j2)]
        study = write_judged_study(tmp_path, model.base_url, judges, bench)
        args = study_args(study, tmp_path / "killed")
        run = tmp_path / "killed" / "s" / "runs" / "m--a"
        process = start_study(args)
        try:
            # every stage has stored the verdicts its server let through: all three are judging
            wait_for(lambda: all(sum(line["by"] == "judge" for line in _lines(run, name)) >= 3
                                 for name in PROTOCOLS), process)  # fmt: skip
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        finally:
            _stop(process)
        with open(run / "judges" / "eq" / "judgements.jsonl", "a", encoding="utf-8") as handle:
            handle.write('{"id": "q1", "repeat": 0, "sta')  # a torn last line
        for reply in replies:
            reply.release.set()
        resumed = CliRunner().invoke(app, args)
        assert resumed.exit_code == 0, resumed.output
        asked = [sum(reply.calls.values()) for reply in replies]
        clean = CliRunner().invoke(app, study_args(study, tmp_path / "clean"))
        assert clean.exit_code == 0, clean.output
    record = json.loads((run.parents[1] / "study.json").read_text())
    assert {judge["state"] for judge in record["judges"].values()} == {"done"}
    assert verdicts(run) == verdicts(tmp_path / "clean" / "s" / "runs" / "m--a")
    for name in PROTOCOLS:  # every (item, repeat) once, no line of the kill left behind
        keys = Counter((line["id"], line["repeat"]) for line in judge_lines(run / "judges" / name))
        assert set(keys.values()) == {1}
    # each stage re-asked at most the calls it had in flight at the kill (2 per stage)
    judged = [sum(line["by"] == "judge" for line in judge_lines(run / "judges" / n))
              for n in PROTOCOLS]  # fmt: skip
    assert all(j <= a <= j + 2 for j, a in zip(judged, asked, strict=True)), (judged, asked)


def _lines(run: Path, name: str) -> list[dict[str, Any]]:
    """The stage's complete lines so far (none before it started)."""
    path = run / "judges" / name / "judgements.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.endswith("}")]  # fmt: skip


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.kill()
    process.communicate()
