"""Ingest benchmark: medlens's streaming TSV loader vs ``pandas.read_csv`` (what VLMEvalKit does).

Builds a GMAI-format TSV of at least 800 MB from the real VQA-RAD images in ../shared/realdata
(full-size PNGs, box/mask/contour overlays, image references, multi-answer rows; see
tests/gmai_fixture.py), then measures, each in a fresh subprocess on a warm page cache, with
every phase but ``decode`` repeated ``--repeat`` times in interleaved rounds (the figures are
medians: one run of any phase varies by ±20% on a shared machine):

- ``read``:    reading the file in 1 MiB chunks (the I/O floor)
- ``pandas``:  ``pandas.read_csv(path, sep="\\t")`` as a VLMEvalKit install runs it: VLMEvalKit does
  not install pyarrow, so pandas keeps text cells as Python strings (pandas 3 with string storage
  ``python``, its default without pyarrow; pandas 2 makes object columns, slower still). This is
  the target's yardstick, the case the issue measured (5.6 s).
- ``pandas-arrow``: the same with pyarrow present (medlens depends on it), which makes pandas 3
  keep text in Arrow buffers: about 3x faster than ``pandas`` here, so it is printed too.
- ``index``:   medlens iterating every item (no image decoded), and the time to the first item
- ``decode``:  medlens iterating every item and decoding its image (VLMEvalKit's decode rules)
- ``first-run``: a whole ``medlens run --bench gmai:PATH --model first`` (load, fingerprint, run
  directory, records, results.json) through ``medlens.evaluate``; baselines never read images

Targets: index ≥ 5× faster than pandas, index peak RSS ≤ 150 MB, first item < 0.1 s; a
``first`` run faster than pandas merely reading the file, at ≤ 400 MB peak RSS.

    .venv/bin/python bench/ingest.py                 # build in a temp dir, measure, delete
    .venv/bin/python bench/ingest.py --path big.tsv  # reuse (or build) this file and keep it
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CHUNK = 1 << 20


def peak_rss_mb() -> float:
    """VmHWM of this process; ``ru_maxrss`` would report the forking parent's peak across exec."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def measure_read(path: str) -> dict[str, float]:
    start = time.perf_counter()
    with open(path, "rb", buffering=0) as handle:
        while handle.read(CHUNK):
            pass
    return {"wall_s": time.perf_counter() - start}


def measure_pandas(path: str, arrow: bool) -> dict[str, float]:
    import pandas

    if not arrow:  # what pandas does when pyarrow is not installed
        pandas.set_option("mode.string_storage", "python")

    start = time.perf_counter()
    frame = pandas.read_csv(path, sep="\t")
    return {"wall_s": time.perf_counter() - start, "rows": len(frame)}


def measure_medlens(path: str, decode: bool) -> dict[str, float]:
    start = time.perf_counter()
    # The registry imports the loader lazily; import it here, so that no import is timed (the
    # pandas phase does not time ``import pandas`` either).
    import medlens.sources.vlmeval  # noqa: F401
    from medlens.api import load_benchmark
    from medlens.core.items import decode_image

    imported = time.perf_counter()
    first = 0.0
    count = 0
    for item in load_benchmark(f"gmai:{path}").items():
        if count == 0:
            first = time.perf_counter() - imported
        if decode:
            decode_image(item.images[0].read_bytes(), name=item.id).load()
        count += 1
    heavy = sorted(m for m in ("numpy", "pandas", "PIL", "torch") if m in sys.modules)
    return {
        "wall_s": time.perf_counter() - imported,
        "first_item_s": first,
        "import_s": imported - start,
        "rows": count,
        "heavy_modules": ",".join(heavy) or "none",  # type: ignore[dict-item]
    }


def measure_first_run(path: str) -> dict[str, float]:
    """A complete `first` run into a temporary folder (imports not timed, as for pandas)."""
    import shutil

    began = time.perf_counter()
    import scipy.special  # noqa: F401  (the CIs; imported by every run, untimed like pandas)

    import medlens.analysis.results
    import medlens.execution.evaluate
    import medlens.sources.vlmeval  # noqa: F401
    from medlens.api import evaluate

    out = tempfile.mkdtemp(prefix="medlens-first-run-")
    try:
        start = time.perf_counter()
        results = evaluate(f"gmai:{path}", "first", out=out, name="first", cache=False)
        wall = time.perf_counter() - start
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"wall_s": wall, "rows": results["counts"]["records"], "import_s": start - began}


def child(phase: str, path: str) -> None:
    """Run one measurement in this (fresh) process and print it as JSON."""
    if phase == "read":
        result = measure_read(path)
    elif phase in ("pandas", "pandas-arrow"):
        result = measure_pandas(path, arrow=phase == "pandas-arrow")
    elif phase == "first-run":
        result = measure_first_run(path)
    else:
        result = measure_medlens(path, decode=phase == "decode")
    result["peak_rss_mb"] = peak_rss_mb()
    print(json.dumps(result))


def run_child(phase: str, path: str) -> dict[str, float]:
    command = [sys.executable, __file__, "--child", phase, path]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def build(path: Path, min_mb: int, rows: int) -> None:
    sys.path.insert(0, str(HERE.parent / "tests"))
    from gmai_fixture import write_gmai_tsv

    start = time.perf_counter()
    written = write_gmai_tsv(
        path, n_rows=rows, min_bytes=min_mb * 1_000_000, max_side=0, compress_level=1
    )
    owners = sum(1 for r in written if r.owner == r.index)
    multi = sum(1 for r in written if r.kind == "multi_choice")
    seconds, size_mb = time.perf_counter() - start, path.stat().st_size / 1e6
    print(
        f"built {path} in {seconds:.0f} s: {size_mb:,.0f} MB, {len(written):,} rows "
        f"({owners:,} images, {len(written) - owners:,} references, {multi:,} multi-answer)"
    )


def summarise(runs: list[dict[str, float]]) -> dict[str, float]:
    """The run with the median wall time, with the worst peak RSS and first-item time of all."""
    summary = dict(sorted(runs, key=lambda run: run["wall_s"])[len(runs) // 2])
    for worst in ("peak_rss_mb", "first_item_s"):
        if worst in summary:
            summary[worst] = max(run[worst] for run in runs)
    return summary


def per_round_ratios(runs: dict[str, list[dict[str, float]]], baseline: str) -> list[float]:
    """``baseline`` time / index time, round by round (neighbours share the machine's mood)."""
    pairs = zip(runs[baseline], runs["index"], strict=True)
    return sorted(slow["wall_s"] / fast["wall_s"] for slow, fast in pairs)


def report(
    results: dict[str, dict[str, float]], runs: dict[str, list[dict[str, float]]], size_mb: float
) -> None:
    print(f"\n{len(runs['index'])} fresh-process runs each (decode: one): median wall time, "
          "worst peak RSS and first item")  # fmt: skip
    print(f"{'phase':<12} {'wall s':>7} {'MB/s':>7} {'peak RSS MB':>12} {'first item s':>13}  rows")
    for phase, r in results.items():
        first = f"{r['first_item_s']:.4f}" if "first_item_s" in r else "-"
        rows = f"{int(r['rows']):,}" if "rows" in r else "-"
        print(
            f"{phase:<12} {r['wall_s']:7.2f} {size_mb / r['wall_s']:7.0f} {r['peak_rss_mb']:12.0f} "
            f"{first:>13}  {rows}"
        )
    pandas, index = results["pandas"], results["index"]
    ratios = per_round_ratios(runs, "pandas")
    print(f"\nindex vs pandas: {statistics.median(ratios):.1f}x faster (target >= 5x; median of "
          f"per-round ratios, range {ratios[0]:.1f}-{ratios[-1]:.1f}), "
          f"{pandas['peak_rss_mb'] / index['peak_rss_mb']:.0f}x less peak RSS")  # fmt: skip
    arrow = per_round_ratios(runs, "pandas-arrow")
    print(f"index vs pandas-arrow (pyarrow installed): {statistics.median(arrow):.1f}x faster "
          f"(range {arrow[0]:.1f}-{arrow[-1]:.1f})")  # fmt: skip
    print(f"index peak RSS {index['peak_rss_mb']:.0f} MB (target <= 150); first item "
          f"{index['first_item_s'] * 1000:.1f} ms (target < 100); medlens import "
          f"{index['import_s'] * 1000:.0f} ms; heavy modules loaded while indexing: "
          f"{index['heavy_modules']}")  # fmt: skip
    first_run = results["first-run"]
    ratios = sorted(
        slow["wall_s"] / fast["wall_s"]
        for slow, fast in zip(runs["pandas"], runs["first-run"], strict=True)
    )
    print(f"`first` run (medlens.evaluate, whole run): {first_run['wall_s']:.2f} s, "
          f"{statistics.median(ratios):.1f}x faster than pandas reading the file (target > 1x; "
          f"range {ratios[0]:.1f}-{ratios[-1]:.1f}), peak RSS {first_run['peak_rss_mb']:.0f} MB "
          f"(target <= 400); its imports (not timed, like pandas's): {first_run['import_s']:.2f} s")  # fmt: skip
    print(f"decode every image: {results['decode']['wall_s']:.1f} s, "
          f"{results['decode']['rows'] / results['decode']['wall_s']:.0f} images/s, "
          f"peak RSS {results['decode']['peak_rss_mb']:.0f} MB")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, help="TSV to use (built if absent); kept afterwards")
    parser.add_argument("--min-mb", type=int, default=800)
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument(
        "--repeat", type=int, default=5, help="rounds of every phase but decode (odd)"
    )
    parser.add_argument("--child", nargs=2, metavar=("PHASE", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    keep = args.path is not None
    folder = None if keep else tempfile.mkdtemp(prefix="medlens-ingest-")
    path = args.path or Path(folder or ".") / "GMAI_mm_bench_VAL_big.tsv"
    try:
        if not path.exists():
            build(path, args.min_mb, args.rows)
        size_mb = path.stat().st_size / 1e6
        run_child("read", str(path))  # warm the page cache so every phase reads from memory
        phases = ("read", "pandas", "pandas-arrow", "index", "first-run")
        runs: dict[str, list[dict[str, float]]] = {phase: [] for phase in phases}
        for _ in range(args.repeat):
            for phase, phase_runs in runs.items():
                phase_runs.append(run_child(phase, str(path)))
        results = {phase: summarise(phase_runs) for phase, phase_runs in runs.items()}
        results["decode"] = run_child("decode", str(path))
        assert results["pandas"]["rows"] == results["index"]["rows"], "row counts differ"
        assert results["first-run"]["rows"] == results["index"]["rows"], "records missing"
        report(results, runs, size_mb)
    finally:
        if not keep:
            path.unlink(missing_ok=True)
            os.rmdir(folder or ".")


if __name__ == "__main__":
    main()
