"""Benchmark: studies in parallel, image-grouped dispatch, and a study's overhead.

    PYTHONPATH=src .venv/bin/python bench/study.py [--items 500] [--models 4] [--latency 0.05]
        [--concurrency 16] [--slake DIR] [--parts parallel,image,overhead] [--repeat 1]

``--repeat N``: N interleaved rounds (runs back to back, then the study) and their medians for
parallel and overhead, the best of N for image order; the machine is shared, so repeat.

Every server is ``tests/loopback_server.py`` in a process of its own, answering OpenAI chat
requests; every run goes through medlens's real path (``execution.evaluate``, as ``medlens
run`` makes it), and the study through ``study.conduct`` (as ``medlens study`` does, without
per-run HTML reports, which ``--no-reports`` leaves out too). Figures, each with its baseline
measured in the same invocation:

- parallel: MODELS models, each behind its own server with LATENCY seconds per answer, × 2
  benchmarks of ITEMS text-only questions at CONCURRENCY per endpoint. Prints the 2·MODELS runs
  back to back, the slowest model's two runs back to back (what a study can at best take: runs
  on one endpoint take turns), the slowest single run, and the study; target study ≤ 1.3 × the
  slowest model's runs, against ≈ MODELS × for the runs back to back.
- image: SLAKE's English test questions (1,061 on 96 images) in a shuffled order, against a
  server whose vision encoder takes 20 ms for an image it has not seen among its last 64 and
  2 ms otherwise (one image at a time, as one GPU encodes), at CONCURRENCY; ``--order item``
  against ``--order image`` (target ≥ 1.5× faster), records compared.
- overhead: the parallel setup with instant servers: the study against the same runs back to
  back (target < 5% over), and the study's boards and index page timed apart.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "tests" / "loopback_server.py"
sys.path.insert(0, str(ROOT / "tests"))


@contextmanager
def servers(count: int, *options: str, script: Path = SERVER) -> Iterator[list[str]]:
    """`count` loopback servers (`script`: a judge server too) in their own processes; their
    base URLs."""
    processes = [
        subprocess.Popen(
            [sys.executable, str(script), "--lifetime", "3600", *options],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(count)
    ]
    try:
        yield [p.stdout.readline().strip() for p in processes]  # type: ignore[union-attr]
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def write_text_bench(path: Path, n_items: int, prefix: str) -> str:
    rows = [
        {
            "id": f"{prefix}{i}",
            "question": f"[[{prefix}{i}]] Which plane is shown in case {i}?",
            "kind": "choice",
            "options": {"A": "axial", "B": "coronal", "C": "sagittal", "D": "oblique"},
            "answer": "ABCD"[i % 4],
            "meta": {"task": f"t{i % 5}"},
        }
        for i in range(n_items)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return f"jsonl:{path}"


def spec(url: str, name: str) -> str:
    return f"openai:{name}?base_url={url}&max_retries=2&read_timeout=120"


def timed_run(bench: str, model: str, out: Path, name: str, concurrency: int, order: str) -> float:
    from medlens.api import evaluate

    started = time.perf_counter()
    results = evaluate(bench, model, out=out, name=name, concurrency=concurrency, cache=False,
                       order=order)  # fmt: skip
    elapsed = time.perf_counter() - started
    if results["rates"]["error"]:
        raise SystemExit(f"{name}: {results['rates']['error']:.1%} of the items errored")
    return elapsed


class Quiet:
    def job_started(self, *args: Any) -> None: ...

    def job_advanced(self, *args: Any) -> None: ...

    def job_finished(self, *args: Any) -> None: ...

    def note(self, message: str) -> None: ...


def timed_study(path: Path, out: Path) -> tuple[float, float]:
    """(wall seconds of the whole study, of its outputs: boards and index page)."""
    from medlens.study import conduct as conducting
    from medlens.study.file import load_study
    from medlens.study.plan import StudySettings

    spent: list[float] = []
    write = conducting.write_outputs

    def timed_outputs(prepared: Any, result: Any) -> None:
        started = time.perf_counter()
        write(prepared, result)
        spent.append(time.perf_counter() - started)

    conducting.write_outputs = timed_outputs
    try:
        started = time.perf_counter()
        settings = StudySettings(out=out, cache=False, reports=False)
        prepared = conducting.prepare_study(load_study(path), settings)
        result = conducting.conduct(prepared, Quiet())
        elapsed = time.perf_counter() - started
    finally:
        conducting.write_outputs = write
    states = {r.state for r in result.outcome.results.values()}
    if states != {"done"}:
        raise SystemExit(f"study ended with states {states}")
    return elapsed, spent[0]


def write_study_file(
    path: Path, urls: list[str], benches: dict[str, str], concurrency: int
) -> Path:
    lines = ['name = "bench"', "[models]"]
    lines += [f'm{i} = {{ spec = "{spec(url, f"m{i}")}", concurrency = {concurrency} }}'
              for i, url in enumerate(urls)]  # fmt: skip
    lines += ["[benchmarks]"] + [f'{label} = "{text}"' for label, text in benches.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def runs_and_study(tmp: Path, args: argparse.Namespace, latency: float) -> dict[str, Any]:
    """Every run back to back, then the same runs as one study, `--repeat` times interleaved
    (each round in fresh folders); the median of each figure."""
    import statistics

    tmp.mkdir(parents=True, exist_ok=True)
    benches = {b: write_text_bench(tmp / f"{b}.jsonl", args.items, b) for b in ("a", "b")}
    rounds: list[dict[str, float]] = []
    with servers(args.models, "--latency", str(latency)) as urls:
        timed_run(
            benches["a"], spec(urls[0], "warm"), tmp / "warm", "warm", args.concurrency, "image"
        )
        path = write_study_file(tmp / "bench.toml", urls, benches, args.concurrency)
        for k in range(args.repeat):
            single: dict[tuple[int, str], float] = {}
            for m, url in enumerate(urls):
                for label, bench in benches.items():
                    single[(m, label)] = timed_run(bench, spec(url, f"m{m}"), tmp / f"serial{k}",
                                                   f"m{m}--{label}", args.concurrency, "image")  # fmt: skip
            study, outputs = timed_study(path, tmp / f"studies{k}")
            lanes = [sum(t for (m, _), t in single.items() if m == i) for i in range(args.models)]
            rounds.append({"serial": sum(single.values()), "lane": max(lanes),
                           "single": max(single.values()), "study": study, "outputs": outputs})  # fmt: skip
    return {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}


def parallel(tmp: Path, args: argparse.Namespace) -> None:
    f = runs_and_study(tmp / "parallel", args, args.latency)
    print(f"parallel: {args.models} models × 2 benchmarks × {args.items} items, "
          f"{args.latency * 1000:.0f} ms per answer, concurrency {args.concurrency} per endpoint")  # fmt: skip
    print(
        f"  runs back to back            {f['serial']:7.2f} s  ({f['serial'] / f['lane']:.2f}× the slowest model's runs)"
    )
    print(
        f"  slowest model's 2 runs       {f['lane']:7.2f} s  (slowest single run {f['single']:.2f} s)"
    )
    print(f"  study                        {f['study']:7.2f} s  ({f['study'] / f['lane']:.2f}× the slowest model's runs; "
          f"{f['study'] / f['single']:.2f}× the slowest single run; boards + index {f['outputs']:.2f} s)")  # fmt: skip


def overhead(tmp: Path, args: argparse.Namespace) -> None:
    f = runs_and_study(tmp / "overhead", args, 0.0)
    runs_phase = f["study"] - f["outputs"]
    print(f"overhead: the same study with instant servers ({args.models} × 2 × {args.items} items)")
    print(f"  runs back to back            {f['serial']:7.2f} s")
    print(
        f"  study                        {f['study']:7.2f} s  ({f['study'] / f['serial'] - 1:+.1%} over the runs)"
    )
    print(f"  study without its outputs    {runs_phase:7.2f} s  ({runs_phase / f['serial'] - 1:+.1%}; "
          f"boards + index {f['outputs']:.2f} s)")  # fmt: skip


def shuffled_slake(slake: Path, folder: Path, seed: int = 0) -> tuple[str, int, int]:
    """SLAKE's English test items in a shuffled order as a jsonl file with its images copied."""
    from medlens.api import load_benchmark

    items = list(load_benchmark(f"slake:{slake}?split=test&lang=en").items())
    random.Random(seed).shuffle(items)
    (folder / "imgs").mkdir(parents=True, exist_ok=True)
    lines, images = [], set()
    for item in items:
        record = item.to_json()
        paths = []
        for image in item.images:
            name = f"imgs/{Path(image.path).parent.name}.jpg"
            if name not in images:
                shutil.copyfile(image.path, folder / name)
                images.add(name)
            paths.append(name)
        record["images"] = paths
        lines.append(json.dumps(record, ensure_ascii=False))
    path = folder / "slake_shuffled.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return f"jsonl:{path}", len(items), len(images)


def server_misses(url: str) -> int:
    import httpx

    return int(httpx.get(url.removesuffix("/v1") + "/stats").json()["image_misses"])


def image_order(tmp: Path, args: argparse.Namespace) -> None:
    from study_fixtures import records

    bench, n_items, n_images = shuffled_slake(args.slake, tmp / "slake")
    with servers(1) as (url,):  # imports, first connections: on a server of its own
        timed_run(bench, spec(url, "warm"), tmp / "warm", "warm", args.concurrency, "image")
    print(
        f"image order: SLAKE English test, {n_items} questions on {n_images} images, shuffled; "
        f"concurrency {args.concurrency}"
    )
    for label, options in (("encoder 20 ms per new image (LRU 64), 2 ms per seen one",
                            ("--image-cost", "0.02,0.002,64")),
                           ("instant server (the client's own image work only)", ())):  # fmt: skip
        times, misses = {}, {}
        for order in ("item", "image"):
            best = math.inf
            for k in range(args.repeat):
                with servers(1, *options) as (url,):  # a fresh server: its image cache is empty
                    before = server_misses(url)
                    best = min(best, timed_run(bench, spec(url, f"m{k}"), tmp / f"{order}{k}{len(options)}",
                                               "r", args.concurrency, order))  # fmt: skip
                    misses[order] = server_misses(url) - before
            times[order] = best
        same = records(tmp / f"item0{len(options)}" / "r") == records(
            tmp / f"image0{len(options)}" / "r"
        )
        print(f"  {label}")
        print(
            f"    --order item               {times['item']:7.2f} s  (encoder misses {misses['item']})"
        )
        print(f"    --order image              {times['image']:7.2f} s  ({times['item'] / times['image']:.2f}× faster; "
              f"encoder misses {misses['image']}; records {'identical' if same else 'DIFFERENT'})")  # fmt: skip


def default_slake() -> Path:
    for base in (ROOT.parent, *ROOT.parents):
        candidate = base / "shared" / "realdata" / "slake"
        if candidate.is_dir():
            return candidate
    return ROOT.parent / "shared" / "realdata" / "slake"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=500)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--slake", type=Path, default=default_slake())
    parser.add_argument("--parts", default="parallel,image,overhead")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds: medians of N (parallel, overhead), best of N (image)")  # fmt: skip
    args = parser.parse_args()
    parts = args.parts.split(",")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        import os

        os.environ.setdefault("MEDLENS_CACHE", str(tmp / "cache"))
        if "parallel" in parts:
            parallel(tmp, args)
        if "image" in parts:
            image_order(tmp, args)
        if "overhead" in parts:
            overhead(tmp, args)


if __name__ == "__main__":
    main()
