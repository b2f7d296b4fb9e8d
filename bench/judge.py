"""Benchmark: the judge stage over 5,000 open answers against a loopback judge answering instantly.

    .venv/bin/python bench/judge.py [--items 5000] [--concurrency 32]

A finished run of ``--items`` open items is made first (answers replayed from a prediction file
with the realistic mix of ``tests/judge_fixtures.py``: exact answers, paraphrases, negations,
wrong findings, injection attempts). The judge server (``tests/judge_server.py``) runs in a
separate process, so only this process's CPU is counted. Figures:

1. judgements/s and harness CPU ms per judgement, every item sent (``--scope all``, no cache);
2. the share of calls rules-first (``--scope unresolved``) saves on that mix;
3. re-judging the finished stage (the same command again): calls made (must be 0) and seconds,
   results.json rebuilt included.

Targets on the 2-core dev machine: ≥ 150 judgements/s at concurrency 32, ≤ 5 ms CPU per
judgement, re-judging < 2 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))


def start_server() -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, str(TESTS / "judge_server.py"), "--lifetime", "900"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


def timed_judge(options: object) -> tuple[object, float, float]:
    from medlens.judges.stage import judge_run

    wall, cpu = time.perf_counter(), time.process_time()
    from medlens.analysis.artifacts import results_after_writing

    outcome = judge_run(options)  # type: ignore[arg-type]
    results_after_writing(outcome.run)  # the run's results, rebuilt with the judge's lines
    return outcome, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    from judge_fixtures import finished_run, judge_spec
    from medlens.analysis.results import build_results
    from medlens.core.specs import parse_spec
    from medlens.judges.options import JudgeOptions
    from medlens.runs.store import RunStore

    server, base_url = start_server()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            run = finished_run(Path(tmp), n_open=args.items, n_closed=0)
            spec = parse_spec(judge_spec(base_url, max_connections=str(args.concurrency)))
            every = JudgeOptions(run, spec, "equivalence", name="all", scope="all",
                                 concurrency=args.concurrency, cache=False)  # fmt: skip
            outcome, wall, cpu = timed_judge(every)
            calls = outcome.judged  # type: ignore[attr-defined]
            print(f"judge stage, every item sent: {calls} judgements in {wall:.2f} s = "
                  f"{calls / wall:.1f} judgements/s at concurrency {args.concurrency}; "
                  f"harness CPU {1000 * cpu / calls:.2f} ms per judgement")  # fmt: skip
            other = finished_run(Path(tmp), n_open=args.items, n_closed=0, name="other")
            rules_first = JudgeOptions(other, spec, "equivalence", name="rules-first",
                                       concurrency=args.concurrency, cache=False)  # fmt: skip
            timed_judge(rules_first)
            overall = build_results(RunStore.open(other))["judges"]["rules-first"]["overall"]
            saved = overall["calls_saved"] / (overall["calls"] + overall["calls_saved"])
            print(f"rules first: {overall['calls']} calls, {overall['calls_saved']} saved = "
                  f"{100 * saved:.1f}% of calls on the realistic mix")  # fmt: skip
            again, wall, cpu = timed_judge(every)
            print(f"re-judging the finished stage: {again.judged} calls, {wall:.2f} s "  # type: ignore[attr-defined]
                  f"({cpu:.2f} s CPU; includes rebuilding results.json)")  # fmt: skip
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
