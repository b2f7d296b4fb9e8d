"""Subset benchmark: ``medlens subset`` of an 800 MB GMAI-format TSV, wall time and peak RSS.

Builds the same TSV as ``bench/ingest.py`` (real VQA-RAD images at full size, overlays, image
references, multi-answer rows; see tests/gmai_fixture.py), then runs, each in a fresh process on
a warm page cache, ``--repeat`` interleaved rounds of:

- ``read``:     reading the file in 1 MiB chunks (the I/O floor of one pass)
- ``sample``:   ``--sample 500 --stratify granularity,department`` (a cost-controlled sample)
- ``half``:     ``--fraction 0.5 --stratify granularity`` (a 400 MB output: the copy path)
- ``where``:    ``--where "granularity=box"`` (a lexical-tree cut)

Each phase is one streaming pass over the source (selection and the source's content hash),
then the kept rows are copied byte for byte, then the output is read once to fingerprint it for
``subset.json``. Target: peak RSS ≤ 150 MB. Figures are medians over rounds (worst peak RSS).

    .venv/bin/python bench/subset.py                 # build in a temp dir, measure, delete
    .venv/bin/python bench/subset.py --path big.tsv  # reuse (or build) this file and keep it
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHUNK = 1 << 20
PHASES: dict[str, list[str]] = {
    "sample": ["--sample", "500", "--stratify", "granularity,department"],
    "half": ["--fraction", "0.5", "--stratify", "granularity"],
    "where": ["--where", "granularity=box"],
}


def peak_rss_mb() -> float:
    """VmHWM of this process (``ru_maxrss`` would report the forking parent's peak)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def child(phase: str, path: str, out: str) -> None:
    """One measurement in this fresh process, printed as JSON."""
    if phase == "read":
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as handle:
            while handle.read(CHUNK):
                pass
        result: dict[str, float] = {"wall_s": time.perf_counter() - start}
    else:
        from medlens.builder.subset import subset
        from medlens.execution.selection import Recipe  # imports are not timed

        recipe = _recipe(PHASES[phase])
        start = time.perf_counter()
        sidecar = subset(f"gmai:{path}", Path(out), recipe)
        result = {
            "wall_s": time.perf_counter() - start,
            "items": sidecar["n_items"],
            "of": sidecar["source"]["n_items"],
            "out_mb": Path(out).stat().st_size / 1e6,
        }
        assert isinstance(recipe, Recipe)
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def _recipe(args: list[str]) -> object:
    from medlens.execution.selection import Recipe, parse_stratify

    options = dict(zip(args[::2], args[1::2], strict=True))
    return Recipe(
        where=options.get("--where"),
        sample=int(options["--sample"]) if "--sample" in options else None,
        fraction=float(options["--fraction"]) if "--fraction" in options else None,
        stratify=parse_stratify(options.get("--stratify")),
    )


def run_child(phase: str, path: Path, folder: Path) -> dict[str, float]:
    out = folder / phase / f"{phase}.tsv"
    command = [sys.executable, __file__, "--child", phase, str(path), str(out)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    shutil.rmtree(out.parent, ignore_errors=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def build(path: Path, min_mb: int, rows: int) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from gmai_fixture import write_gmai_tsv

    start = time.perf_counter()
    written = write_gmai_tsv(
        path, n_rows=rows, min_bytes=min_mb * 1_000_000, max_side=0, compress_level=1
    )
    print(f"built {path} in {time.perf_counter() - start:.0f} s: "
          f"{path.stat().st_size / 1e6:,.0f} MB, {len(written):,} rows")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, help="TSV to use (built if absent); kept afterwards")
    parser.add_argument("--min-mb", type=int, default=800)
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--repeat", type=int, default=3, help="rounds of every phase (odd)")
    parser.add_argument(
        "--child", nargs=3, metavar=("PHASE", "PATH", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    folder = Path(tempfile.mkdtemp(prefix="medlens-subset-"))
    path = args.path or folder / "GMAI_mm_bench_VAL_big.tsv"
    try:
        if not path.exists():
            build(path, args.min_mb, args.rows)
        size_mb = path.stat().st_size / 1e6
        run_child("read", path, folder)  # warm the page cache
        runs: dict[str, list[dict[str, float]]] = {p: [] for p in ("read", *PHASES)}
        for _ in range(args.repeat):
            for phase, phase_runs in runs.items():
                phase_runs.append(run_child(phase, path, folder))
        print(f"\n{size_mb:,.0f} MB source; {args.repeat} fresh-process runs per phase: "
              "median wall time, worst peak RSS")  # fmt: skip
        print(
            f"{'phase':<8} {'wall s':>7} {'MB/s':>6} {'peak RSS MB':>12} {'items':>12} {'out MB':>7}"
        )
        for phase, phase_runs in runs.items():
            wall = statistics.median(r["wall_s"] for r in phase_runs)
            peak = max(r["peak_rss_mb"] for r in phase_runs)
            last = phase_runs[-1]
            items = f"{int(last['items']):,}/{int(last['of']):,}" if "items" in last else "-"
            out_mb = f"{last['out_mb']:.0f}" if "out_mb" in last else "-"
            print(
                f"{phase:<8} {wall:7.2f} {size_mb / wall:6.0f} {peak:12.0f} {items:>12} {out_mb:>7}"
            )
        worst = max(r["peak_rss_mb"] for p in PHASES for r in runs[p])
        print(f"\nworst subset peak RSS {worst:.0f} MB (target <= 150)")
    finally:
        if args.path is None:
            path.unlink(missing_ok=True)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
