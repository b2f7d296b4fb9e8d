"""Viewer benchmark: `medlens view` over runs of N items, pages timed from the server and Chromium.

Per size it writes a jsonl benchmark with real PNGs (``tests/benchfiles.py``), runs ``medlens run
--model random`` on it twice (two runs side by side), starts ``medlens view`` on a free port and
times: startup (process start → listening: imports plus reading both runs; its CPU seconds too,
which a loaded machine does not inflate), then the first and the
median of REPEATS requests for the first list page, a filtered page (outcome + axis + text), the last
page, an item page and a thumbnail, and, where Selenium and chromedriver are installed, the
browser's navigation timing of the first page (request sent → DOM built, and → load). The
smallest size is the baseline: the ratio column shows how a page scales with run size (the
first page should not: only the filter pass over the rows grows with N).

Target: a 26,000-item run's first page renders in < 1 s.

    .venv/bin/python bench/viewer.py [--sizes 26000,2600]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from benchfiles import write_jsonl_benchmark

REPEATS = 15
PAGES = {
    "first page": "/",
    "filtered page": "/?outcome=wrong&of=b&a.modality=CT&q=option",
    "last page": "/?page=100000",
    "item page": "/item/q5",
    "thumbnail": "/image/0/0/0/q5?size=thumb",
}


def make_runs(root: Path, n_items: int) -> Path:
    bench = write_jsonl_benchmark(root / "data", n_items)
    for name, seed in (("a", "0"), ("b", "1")):
        subprocess.run(
            [sys.executable, "-m", "medlens", "run", "--bench", f"jsonl:{bench}", "--model",
             "random", "--seed", seed, "--name", name, "--out", str(root / "runs")],
            check=True, capture_output=True,
        )  # fmt: skip
    return root / "runs"


def request_seconds(url: str) -> tuple[float, float]:
    """(the first request, the median of REPEATS) in seconds: the first one pays what the
    viewer reads on demand (records for the text filter), the median what every later one does."""
    seconds = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        with urllib.request.urlopen(url, timeout=60) as response:
            response.read()
        seconds.append(time.perf_counter() - start)
    return seconds[0], statistics.median(seconds)


def browser_seconds(url: str) -> tuple[float, float] | None:
    """(DOM built, load event) of the first page in headless Chromium, best of three."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu"):
        options.add_argument(argument)
    try:
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    except Exception:  # no driver on this machine: the server figures still stand
        return None
    timings = []
    try:
        for _ in range(3):
            driver.get(url)
            timings.append(driver.execute_script(
                "const t = performance.getEntriesByType('navigation')[0];"
                "return [t.domContentLoadedEventEnd - t.startTime, t.loadEventEnd - t.startTime]"
            ))  # fmt: skip
    finally:
        driver.quit()
    best = min(timings)
    return best[0] / 1000, best[1] / 1000


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds a process has used so far (Linux ``/proc``; None elsewhere):
    start-up's own cost, apart from the waiting a loaded machine adds to its wall time."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(root: Path, n_items: int) -> dict[str, float]:
    runs = make_runs(root, n_items)
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "medlens", "view", str(runs), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = process.stdout.readline()  # type: ignore[union-attr]
        figures = {"startup": time.perf_counter() - start}
        cpu = process_cpu_seconds(process.pid)
        if cpu is not None:
            figures["startup CPU"] = cpu
        url = line.split(": ", 1)[1].strip().rstrip("/")
        for name, path in PAGES.items():
            first, figures[name] = request_seconds(url + path)
            if name in ("first page", "filtered page"):
                figures[f"{name}: first request"] = first
        browser = browser_seconds(url + "/")
        if browser is not None:
            figures["browser: DOM built"], figures["browser: loaded"] = browser
    finally:
        process.terminate()
        process.wait(timeout=30)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="26000,2600")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {REPEATS} requests (seconds)")
    results = {}
    for n_items in sizes:
        with tempfile.TemporaryDirectory() as folder:
            results[n_items] = measure(Path(folder), n_items)
    base = min(sizes)
    print(f"{'':24}" + "".join(f"{f'{n:,} items':>14}" for n in sizes) + f"{'ratio':>9}")
    for name in results[base]:
        cells = "".join(f"{results[n].get(name, float('nan')):>14.4f}" for n in sizes)
        ratio = results[max(sizes)][name] / results[base][name]
        print(f"{name:24}{cells}{ratio:>9.2f}")


if __name__ == "__main__":
    main()
