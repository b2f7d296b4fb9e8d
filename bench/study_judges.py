"""A study with several judges on each benchmark, from scratch, three times in a row (issue 49).

    .venv/bin/python bench/study_judges.py [--models 4] [--benchmarks 2] [--judges 3]
        [--items 60] [--images 12] [--rounds 3] [--latency 0.01] [--concurrency 4]

Before issue 49 a study with two or more judges on one benchmark failed on medlens's own run
lock (its judge stages of one run start side by side, one per judge endpoint), 3 of 3 tries.
Here: MODELS model servers and JUDGES judge servers (``tests/loopback_server.py`` and
``tests/judge_server.py``, each a process of its own), BENCHMARKS benchmarks of ITEMS questions
(half open, half four-option) over IMAGES images each, and a study file with every judge on
every benchmark (equivalence judges, the last one a rubric judge): MODELS × BENCHMARKS runs and
MODELS × BENCHMARKS × JUDGES judge stages. Each round runs ``medlens study`` from scratch (a new
output folder, ``--no-cache``, ``--no-reports``) in a process of its own and prints its wall
time, its exit code and the states of its runs and judge stages; the last line says whether
every round exited 0 with every job done.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
sys.path.insert(0, str(TESTS))

sys.path.insert(0, str(ROOT / "bench"))

from study import servers  # noqa: E402  (bench/study.py)
from study_fixtures import openai_spec, write_shared_bench, write_study  # noqa: E402


def write_benchmarks(folder: Path, args: argparse.Namespace) -> dict[str, str]:
    """The benchmarks (label → spec) and ``gold.json``, which the model servers read."""
    benches: dict[str, str] = {}
    golds: dict[str, str] = {}
    for b in range(args.benchmarks):
        spec, gold = write_shared_bench(folder / f"b{b}", args.items, args.images,
                                        prefix=f"b{b}q", kinds=("open", "choice"))  # fmt: skip
        benches[f"b{b}"], golds = spec, {**golds, **gold}
    (folder / "gold.json").write_text(json.dumps(golds), encoding="utf-8")
    return benches


def study_file(
    folder: Path, benches: dict[str, str], models: list[str], judges: list[str], concurrency: int
) -> Path:
    protocols = ["equivalence"] * (len(judges) - 1) + ["rubric"]
    return write_study(
        folder / "study.toml", "judged",
        {f"m{i}": openai_spec(url, f"model-{i}") for i, url in enumerate(models)}, benches,
        judges={f"j{k}": {"spec": openai_spec(url, f"judge-{k}"), "protocol": protocol}
                for k, (url, protocol) in enumerate(zip(judges, protocols, strict=True))},
        concurrency=concurrency,
    )  # fmt: skip


def one_round(study: Path, out: Path) -> tuple[float, int, Counter[str], Counter[str], str]:
    """Wall time, exit code, run and judge states, and the last lines of stderr."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "medlens", "study", str(study), "--out", str(out), "--no-cache",
         "--no-reports"], env=env, capture_output=True, text=True,
    )  # fmt: skip
    wall = time.perf_counter() - start
    record = json.loads((out / "judged" / "study.json").read_text(encoding="utf-8"))
    runs = Counter(str(r.get("state")) for r in record["runs"].values())
    judges = Counter(str(j.get("state")) for j in record["judges"].values())
    return wall, done.returncode, runs, judges, "\n".join(done.stderr.strip().splitlines()[-3:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--benchmarks", type=int, default=2)
    parser.add_argument("--judges", type=int, default=3)
    parser.add_argument("--items", type=int, default=60)
    parser.add_argument("--images", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.01)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory(prefix="medlens-bench-judged-") as tmp:
        folder = Path(tmp)
        benches = write_benchmarks(folder, args)
        with (
            servers(args.models, "--latency", str(args.latency),
                    "--gold", str(folder / "gold.json")) as models,
            servers(args.judges, script=TESTS / "judge_server.py") as judges,
        ):  # fmt: skip
            study = study_file(folder, benches, models, judges, args.concurrency)
            stages = args.models * args.benchmarks * args.judges
            print(f"{args.models} models × {args.benchmarks} benchmarks × {args.judges} judges: "
                  f"{args.models * args.benchmarks} runs, {stages} judge stages, "
                  f"{args.items} items each")  # fmt: skip
            for number in range(1, args.rounds + 1):
                wall, code, runs, judged, tail = one_round(study, folder / f"round{number}")
                good = code == 0 and set(runs) == {"done"} and judged == Counter({"done": stages})
                ok = ok and good
                print(f"round {number}: {wall:6.1f} s, exit {code}, runs {dict(runs)}, "
                      f"judge stages {dict(judged)}" + ("" if good else f"\n  {tail}"))  # fmt: skip
    print("every round exited 0 with every run and judge stage done" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
