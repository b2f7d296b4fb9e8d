"""Re-scoring bench: `medlens run --model replay:` + `report` against pandas merely reading the
same two files, and against VLMEvalKit's own evaluation of the same predictions.

For each size (default 2,600 and 26,000 rows) it writes a GMAI-MMBench-format VAL TSV and a
VLMEvalKit prediction file (``bench/gmai_files.py``: 3 questions per image, 18 × 18 × 38 × 4
axes, ~5% two-letter answers, realistic outputs), then measures, each command in a fresh
process and the phases interleaved round by round (`--repeat`, medians and ranges printed;
ratios are taken within a round, so neighbours share the machine's load):

- ``pandas``: ``pandas.read_csv`` of both files as a VLMEvalKit install runs it (no pyarrow:
  Python strings), imports untimed — the floor a user compares with;
- ``pandas-arrow``: the same with Arrow strings (pyarrow installed), for context;
- ``run``: ``medlens run --bench gmai:TSV --model replay:PRED --prompt vlmeval --extract vlmeval
  --no-cache`` into a new run folder (the whole command: imports, loading, the run, results.json
  and the score file);
- ``report``: ``medlens report RUN --format json`` on the finished run (results.json reused);
- ``slice``: ``medlens slice RUN --by task,department`` (the score file reused);
- ``report-rebuilt``: the same report after deleting results.json and derived/ (what every
  report cost before derived results were reused), for context;
- ``extract``: CPU seconds of reading all outputs under VLMEvalKit's rules (the run's own
  reading) and under medlens's (the extraction-sensitivity column), in one process;
- ``vlmeval``: VLMEvalKit's ``GMAIMMBenchDataset.evaluate(..., model="exact_matching")`` on
  sizes up to ``--vlmeval-max`` rows, when ``VLMEVAL_GIT`` names a VLMEvalKit checkout
  (``VLMEVAL_PYTHON``: an interpreter with its requirements; default this one). Its 26,000-row
  evaluation takes about 25 minutes here, so it is left out by default.

Bytecode (``--bytecode``, default ``installed``): an installed medlens has its modules compiled
(pip writes the ``.pyc`` files at install; pandas's are there too), while a source checkout run
under ``PYTHONDONTWRITEBYTECODE=1`` (this sandbox) compiles ~160 modules from source in every
command. So before timing, medlens's commands run once, untimed, on a 300-row pair of files
with bytecode writing on and ``PYTHONPYCACHEPREFIX`` set to a temporary folder, and every timed
medlens command reads its ``.pyc`` files from there (nothing is written into the source tree or
site-packages). ``--bytecode source`` times them as the environment leaves them (the setting is
printed on the first line).

Wall, CPU (user + system) and peak RSS of each command come from the kernel (a wrapper process
reads ``RUSAGE_CHILDREN``); pandas's wall and CPU time are its read alone. Targets (26,000
rows, 2 shared cores): run + report ≤ 3× pandas (issue 44 item 7, without forking); report
≤ 1 s; slice ≤ 1 s; peak RSS ≤ 300 MB; extraction ≤ 1 s CPU; time growing linearly from 2,600
to 26,000 rows. Each phase prints its median and its minimum: on a shared machine the minimum
is the figure least disturbed by neighbours.

``--baseline DIR`` times another medlens (its ``src`` folder, e.g. made by ``git archive REV
src | tar -x -C /tmp/base``: ``--baseline /tmp/base/src``) in the same rounds, the two
alternating which goes first, so before and after share the machine's load.

    .venv/bin/python bench/rescore.py [--sizes 2600,26000] [--repeat 3] [--image-side 192]
    .venv/bin/python bench/rescore.py --sizes 26000 --repeat 3 --baseline /tmp/base/src
    VLMEVAL_GIT=~/src/VLMEvalKit VLMEVAL_PYTHON=~/vlm/bin/python .venv/bin/python bench/rescore.py
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from gmai_files import IMAGE_SIDE, write_gmai_files  # noqa: E402
from ingest import peak_rss_mb  # noqa: E402

MEASURE = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - start
if done.returncode:
    sys.exit(done.stderr[-2000:])
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "peak_rss_mb": usage.ru_maxrss / 1024}))
"""
"""Runs one command in a child of a fresh process: its own wall, CPU and peak RSS."""

VLMEVAL = """
import json, sys, time
start = time.perf_counter()
from vlmeval.dataset.image_mcq import GMAIMMBenchDataset
imported = time.perf_counter()
dataset = GMAIMMBenchDataset("GMAI-MMBench_VAL")
acc = dataset.evaluate(sys.argv[1], model="exact_matching", nproc=1)
done = time.perf_counter()
with open(sys.argv[2], "w") as out:
    json.dump({"import_s": imported - start, "evaluate_s": done - imported,
               "overall": float(acc["Overall"][0])}, out)
"""
"""VLMEvalKit's own exact-matching evaluation (its dataset reads $LMUData/GMAI-MMBench_VAL.tsv)."""


def child_pandas(bench: str, predictions: str, arrow: bool) -> None:
    import pandas

    if not arrow:  # what pandas does when pyarrow is not installed (a VLMEvalKit install)
        pandas.set_option("mode.string_storage", "python")
    start, cpu = time.perf_counter(), time.process_time()
    rows = len(pandas.read_csv(bench, sep="\t")) + len(pandas.read_csv(predictions, sep="\t"))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak_rss_mb(), "rows": rows}))


def child_extract(run_dir: str) -> None:
    """CPU seconds of both readings of every recorded output (imports and loading untimed)."""
    from medlens.extract import extract
    from medlens.runs.store import RunStore

    store = RunStore.open(run_dir)
    items, records = store.items(), store.records()
    pairs = [(item, records[item.id].get("output")) for item in items if item.id in records]
    out: dict[str, float] = {}
    for mode in ("vlmeval", "medlens"):
        start = time.process_time()
        for item, output in pairs:
            extract(item, output, mode)  # type: ignore[arg-type]
        out[f"{mode}_cpu_s"] = time.process_time() - start
    out.update(wall_s=out["vlmeval_cpu_s"] + out["medlens_cpu_s"], peak_rss_mb=peak_rss_mb())
    out["cpu_s"] = out["wall_s"]
    print(json.dumps(out))


def measured(command: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *command],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode:
        raise SystemExit(f"{' '.join(command[:4])}… failed: {done.stderr.strip()[-1500:]}")
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def own_child(env: dict[str, str] | None, *args: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=True,
        env=env,
    )  # fmt: skip
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def medlens(*args: str) -> list[str]:
    return [sys.executable, "-m", "medlens", *args]


def source_env(source: Path | None) -> dict[str, str]:
    """This process's environment, with `source` (a medlens ``src`` folder) first on the path."""
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), env.get("PYTHONPATH")]))
    return env


def compiled_env(folder: Path, image_side: int, env: dict[str, str], tag: str) -> dict[str, str]:
    """`env` with medlens's commands reading compiled modules from a temporary prefix, as an
    install's do: filled by running each measured command once, untimed, on 300 rows."""
    env = {**env, "PYTHONPYCACHEPREFIX": str(folder / f"pycache-{tag}")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    bench, predictions = write_gmai_files(folder / "warm-up", 300, 0, image_side)
    one_round(folder, bench, predictions, f"warm-up-{tag}", env)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # from here on the prefix is only read
    return env


def one_round(
    folder: Path, bench: Path, predictions: Path, tag: str, env: dict[str, str] | None = None
) -> dict[str, dict[str, float]]:
    """Every medlens and pandas phase once, in fresh processes (medlens's under `env`)."""
    runs = folder / "runs"
    name = f"replay-{tag}"
    shutil.rmtree(runs / name, ignore_errors=True)
    run_dir = runs / name
    replay = [
        "run", "--bench", f"gmai:{bench}", "--model", f"replay:{predictions}", "--prompt",
        "vlmeval", "--extract", "vlmeval", "--no-cache", "--out", str(runs), "--name", name,
    ]  # fmt: skip
    out = {
        "pandas": own_child(None, "pandas", str(bench), str(predictions)),
        "pandas-arrow": own_child(None, "pandas-arrow", str(bench), str(predictions)),
        "run": measured(medlens(*replay), env),
    }
    out["report"] = measured(medlens("report", str(run_dir), "--format", "json"), env)
    out["slice"] = measured(medlens("slice", str(run_dir), "--by", "task,department"), env)
    (run_dir / "results.json").unlink()
    shutil.rmtree(run_dir / "derived")
    out["report-rebuilt"] = measured(medlens("report", str(run_dir), "--format", "json"), env)
    out["extract"] = own_child(env, "extract", str(run_dir))
    return out


def vlmeval_round(folder: Path, bench: Path, predictions: Path) -> dict[str, float] | None:
    """VLMEvalKit's evaluation of a fresh copy of the predictions (it caches a result pickle)."""
    checkout = os.environ.get("VLMEVAL_GIT")
    if not checkout:
        return None
    work = Path(tempfile.mkdtemp(prefix="vlmeval-", dir=folder))
    target = work / "bench_GMAI-MMBench_VAL.tsv"
    shutil.copy(predictions, target)
    env = {**os.environ, "LMUData": str(bench.parent), "PYTHONPATH": checkout}
    python = os.environ.get("VLMEVAL_PYTHON", sys.executable)
    figures = measured([python, "-c", VLMEVAL, str(target), str(work / "result.json")], env=env)
    figures.update(json.loads((work / "result.json").read_text()))
    return figures


def summary(runs: list[dict[str, float]]) -> str:
    walls = sorted(r["wall_s"] for r in runs)
    cpu = statistics.median(r["cpu_s"] for r in runs)
    rss = max(r["peak_rss_mb"] for r in runs)
    spread = f"{walls[0]:.2f}–{walls[-1]:.2f}" if len(walls) > 1 else "-"
    return f"{statistics.median(walls):8.2f} {walls[0]:8.2f} {spread:>13} {cpu:8.2f} {rss:9.0f}"


def ratios(rounds: list[dict[str, dict[str, float]]], key: str = "wall_s") -> list[float]:
    """(run + report) / pandas, round by round, in wall (or CPU) seconds."""
    return sorted((r["run"][key] + r["report"][key]) / r["pandas"][key] for r in rounds)


def report_size(
    rows: int, rounds: list[dict[str, dict[str, float]]], size_mb: float, label: str = ""
) -> None:
    print(f"\n{label}{rows:,} rows ({size_mb:,.0f} MB of TSV + predictions), {len(rounds)} rounds")
    print(
        f"{'phase':<15} {'wall s':>8} {'min s':>8} {'wall range':>13} {'CPU s':>8} {'peak MB':>9}"
    )
    for phase in rounds[0]:
        print(f"{phase:<15} {summary([r[phase] for r in rounds])}")
    spread = ratios(rounds)
    both = statistics.median(r["run"]["wall_s"] + r["report"]["wall_s"] for r in rounds)
    extract = rounds[0]["extract"]
    cpu = statistics.median(ratios(rounds, "cpu_s"))
    fastest = min(r["run"]["wall_s"] + r["report"]["wall_s"] for r in rounds)
    floor = min(r["pandas"]["wall_s"] for r in rounds)
    print(f"run + report: {both:.2f} s = {statistics.median(spread):.1f}× pandas reading both "
          f"files (per-round range {spread[0]:.1f}–{spread[-1]:.1f}; target ≤ 3×); minima "
          f"{fastest:.2f} s / {floor:.2f} s = {fastest / floor:.1f}×; in CPU seconds "
          f"{cpu:.1f}×")  # fmt: skip
    print(f"extraction: VLMEvalKit rules {extract['vlmeval_cpu_s']:.2f} s + medlens rules "
          f"{extract['medlens_cpu_s']:.2f} s CPU (target ≤ 1 s for the run's reading)")  # fmt: skip


def alternating_rounds(
    folder: Path,
    bench: Path,
    predictions: Path,
    rows: int,
    variants: dict[str, dict[str, str]],
    repeat: int,
) -> dict[str, list[dict[str, dict[str, float]]]]:
    """`repeat` rounds of every variant, the order of the variants turning each round (so
    neither always runs first on a warm or a cold page cache)."""
    labels = list(variants)
    out: dict[str, list[dict[str, dict[str, float]]]] = {label: [] for label in labels}
    for k in range(repeat):
        order = labels[k % len(labels) :] + labels[: k % len(labels)]
        for label in order:
            tag = f"{rows}-{k}-{labels.index(label)}"
            out[label].append(one_round(folder, bench, predictions, tag, variants[label]))
    return out


def bytecode_setting(choice: str) -> str:
    if choice == "installed":
        return "compiled once before timing (PYTHONPYCACHEPREFIX), as an install has it"
    unwritten = os.environ.get("PYTHONDONTWRITEBYTECODE")
    return f"as the environment leaves it (PYTHONDONTWRITEBYTECODE={unwritten or 'unset'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2600,26000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--image-side", type=int, default=IMAGE_SIDE)
    parser.add_argument(
        "--vlmeval-max", type=int, default=2600, help="largest size VLMEvalKit gets"
    )
    parser.add_argument("--keep", type=Path, help="write the files and runs here and keep them")
    parser.add_argument(
        "--bytecode", choices=("installed", "source"), default="installed",
        help="installed: medlens's modules compiled once before timing, as pip does at install; "
        "source: as the environment leaves them",
    )  # fmt: skip
    parser.add_argument(
        "--baseline", type=Path,
        help="another medlens src folder (e.g. `git archive REV src | tar -x -C DIR`: DIR/src), "
        "timed in the same rounds, alternating which goes first",
    )  # fmt: skip
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        phase, *paths = args.child
        if phase == "extract":
            child_extract(paths[0])
        else:
            child_pandas(paths[0], paths[1], arrow=phase == "pandas-arrow")
        return
    folder = args.keep or Path(tempfile.mkdtemp(prefix="medlens-rescore-"))
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.image_side} px "
          f"noise images, 3 questions per image; bytecode: {bytecode_setting(args.bytecode)}")  # fmt: skip
    medians: dict[int, dict[str, float]] = {}
    variants = {"this checkout": source_env(None)}
    if args.baseline is not None:
        variants["baseline"] = source_env(args.baseline.resolve())
    try:
        if args.bytecode == "installed":
            variants = {
                label: compiled_env(folder, args.image_side, env, str(k))
                for k, (label, env) in enumerate(variants.items())
            }
        for rows in sizes:
            bench, predictions = write_gmai_files(folder / f"gmai-{rows}", rows, 0, args.image_side)
            size_mb = (bench.stat().st_size + predictions.stat().st_size) / 1e6
            by_variant = alternating_rounds(folder, bench, predictions, rows, variants, args.repeat)
            for label, rounds in by_variant.items():
                report_size(rows, rounds, size_mb, f"{label}: " if len(variants) > 1 else "")
            rounds = by_variant["this checkout"]
            medians[rows] = {
                phase: statistics.median(r[phase]["wall_s"] for r in rounds) for phase in rounds[0]
            }
            medians[rows]["run+report cpu"] = statistics.median(
                r["run"]["cpu_s"] + r["report"]["cpu_s"] for r in rounds
            )
            if rows <= args.vlmeval_max and os.environ.get("VLMEVAL_GIT"):
                figures = vlmeval_round(folder, bench, predictions)
                if figures is not None:
                    ours = medians[rows]["run"] + medians[rows]["report"]
                    print(f"VLMEvalKit evaluate ({rows:,} rows): {figures['wall_s']:.1f} s wall "
                          f"(its imports {figures.get('import_s', float('nan')):.1f} s, evaluate "
                          f"{figures.get('evaluate_s', float('nan')):.1f} s), peak RSS "
                          f"{figures['peak_rss_mb']:.0f} MB, overall {figures.get('overall')}; "
                          f"medlens run + report {ours:.2f} s: {figures['wall_s'] / ours:.0f}× faster")  # fmt: skip
        if len(sizes) > 1:
            small, large = sizes[0], sizes[-1]
            factor = large / small
            grow = {k: medians[large][k] / medians[small][k] for k in ("run", "report", "pandas")}
            cpu = medians[large]["run+report cpu"] / medians[small]["run+report cpu"]
            print(f"\ngrowth {small:,} → {large:,} rows (×{factor:.0f}): run ×{grow['run']:.1f}, "
                  f"report ×{grow['report']:.1f}, run + report CPU ×{cpu:.1f}, pandas "
                  f"×{grow['pandas']:.1f} (linear or better: ≤ ×{factor:.0f})")  # fmt: skip
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
