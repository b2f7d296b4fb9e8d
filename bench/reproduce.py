"""The offline chain of docs/reproduce.md, timed: N models' answers → runs → judges → the three
paper layouts, with no network beyond a loopback judge server this script starts.

Writes a Med-CMR-shaped benchmark (7 dimensions × MCQ + open items), an MMBU-shaped one (4 tasks
× closed + open forms of each sample, one PNG per sample) and a GMAI-MMBench-format VAL TSV,
plus one ``replay:`` prediction file per model (known answers: right, a synonym, a negation);
starts ``tests/judge_server.py`` (a judge on 127.0.0.1 that reads the prompt's data blocks) and
times each command as a user types it, one process per command:

    medlens run --bench medcmr:… --model replay:… --name M       (per model)
    medlens judge runs/M --judge openai:judge?base_url=… --protocol rubric --name rubric
    medlens board runs/… --layout medcmr --judge rubric --pairs … --meta models.csv
    … the same with mmbu (--protocol equivalence) and gmai (no judge)

    .venv/bin/python bench/reproduce.py [--models 4] [--scale 1] [--keep DIR]
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from paper_fixtures import write_medcmr, write_mmbu  # noqa: E402  (tests/ helpers, on the path above)

MEDCMR_SIZES = (230, 57)  # per dimension: 1,610 MCQ + 399 open items
MMBU_PER_TASK = 250  # 4 tasks × 250 samples × 2 forms = 2,000 items
GMAI_ROWS = 2000


def skill(i: int, n: int) -> tuple[int, list[str]]:
    """Model i of n: MCQ items right out of 10, and its cycle of open-answer modes."""
    modes = [
        ["gold", "negated"],
        ["gold", "synonym", "negated"],
        ["synonym", "negated"],
        ["gold", "synonym"],
    ]
    return 3 + (4 * i) // max(n - 1, 1), modes[i % len(modes)]


def answers(i: int, n: int) -> object:
    right, modes = skill(i, n)

    def answer(d: int, k: int, is_open: bool) -> str:
        if is_open:
            return modes[(d + k) % len(modes)]
        return "right" if (7 * d + k) % 10 < right else "wrong"

    return answer


def write_gmai(folder: Path, n_models: int, rows: int) -> dict[str, Path]:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (8, 8), 128).save(buffer, format="PNG")
    image = base64.b64encode(buffer.getvalue()).decode()
    lines = [
        "index\timage\tquestion\tA\tB\tC\tD\tanswer\tclinical VQA task\tdepartment\tperceptual granularity"
    ]
    tasks, departments = (
        ("Disease Diagnosis", "Organ Recognition"),
        ("Pulmonary Medicine", "Neurosurgery"),
    )
    levels = ("Image Level", "Box Level", "Mask Level", "Contour Level")
    for i in range(rows):
        lines.append(f"{i}\t{image}\tWhich finding {i}?\teffusion\tnodule\tfracture\tnormal\tA\t"
                     f"{tasks[i % 2]}\t{departments[(i // 2) % 2]}\t{levels[i % 4]}")  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    files = {"bench": folder / "GMAI-MMBench_VAL.tsv"}
    files["bench"].write_text("\n".join(lines) + "\n")
    for m in range(n_models):
        right, _ = skill(m, n_models)
        path = folder / f"m{m}.csv"
        path.write_text(
            "index,prediction\n"
            + "".join(f"{i},{'A' if i % 10 < right else 'B'}\n" for i in range(rows))
        )
        files[f"m{m}"] = path
    return files


def timed(label: str, command: list[str], log: list[tuple[str, float]]) -> None:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "medlens", *command], check=True, capture_output=True, text=True
    )
    log.append((label, time.perf_counter() - start))


def start_judge() -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([sys.executable, str(REPO / "tests" / "judge_server.py"), "--lifetime", "3600"],
                              stdout=subprocess.PIPE, text=True, cwd=REPO / "tests")  # fmt: skip
    assert server.stdout is not None
    return server, server.stdout.readline().strip()


def chain(root: Path, n: int, scale: float, log: list[tuple[str, float]]) -> None:
    models = {f"m{i}": answers(i, n) for i in range(n)}
    medcmr = write_medcmr(
        root / "medcmr", models, tuple(max(1, round(v * scale)) for v in MEDCMR_SIZES)
    )  # type: ignore[arg-type]
    mmbu = write_mmbu(root / "mmbu", models, max(1, round(MMBU_PER_TASK * scale)))  # type: ignore[arg-type]
    gmai = write_gmai(root / "gmai", n, max(1, round(GMAI_ROWS * scale)))
    pairs = ",".join(f"m{2 * k}:m{2 * k + 1}" for k in range(n // 2))
    meta = root / "models.csv"
    meta.write_text(
        "run,params_b,medical\n"
        + "".join(f"m{i},{7 * (i + 1)},{'yes' if i % 2 else 'no'}\n" for i in range(n))
    )
    server, url = start_judge()
    judge = f"openai:judge-model?base_url={url}"
    try:
        for name, files, spec, protocol in (("medcmr", medcmr, "medcmr", "rubric"), ("mmbu", mmbu, "mmbu", "equivalence"),
                                            ("gmai", gmai, "gmai", None)):  # fmt: skip
            out = root / "runs" / name
            for m in models:
                timed(f"{name}: run {m}", ["run", "--bench", f"{spec}:{files['bench']}", "--model",
                                           f"replay:{files[m]}", "--out", str(out), "--name", m], log)  # fmt: skip
            runs = [str(out / m) for m in models]
            if protocol:
                for m in models:
                    timed(f"{name}: judge {m} ({protocol})", ["judge", str(out / m), "--judge", judge,
                                                              "--protocol", protocol, "--name", protocol], log)  # fmt: skip
            board = ["board", *runs, "--layout", name, "--pairs", pairs, "--meta", str(meta)]
            board += ["--judge", protocol] if protocol else []
            timed(
                f"{name}: board --layout {name}",
                [*board, "--output", str(root / f"{name}.txt")],
                log,
            )
            timed(
                f"{name}: same board as HTML",
                [*board, "-f", "html", "--output", str(root / f"{name}.html")],
                log,
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--scale", type=float, default=1.0, help="benchmark sizes × this")
    parser.add_argument("--keep", type=Path, help="write the runs and boards here (kept)")
    args = parser.parse_args()
    log: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory(prefix="medlens-reproduce-") as folder:
        root = args.keep or Path(folder)
        chain(root, args.models, args.scale, log)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.models} models")
    for label, seconds in log:
        print(f"{seconds:7.2f} s  {label}")


if __name__ == "__main__":
    main()
