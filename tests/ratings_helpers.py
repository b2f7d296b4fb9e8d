"""Helpers of the ratings/agreement tests: runs, judge stores in the judges' schema, filled sheets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchfiles import write_jsonl_benchmark
from cli_runs import named_run

RUBRIC = ("consistency", "coherence", "visual_accuracy", "ground_truth_correctness")


def make_runs(folder: Path, n_items: int = 40) -> tuple[Path, Path]:
    """A random and an oracle run of one small jsonl benchmark."""
    bench = write_jsonl_benchmark(folder / "bench", n_items=n_items)
    runs = folder / "runs"
    return (named_run(f"jsonl:{bench}", "random", runs, "rand"),
            named_run(f"jsonl:{bench}", "oracle", runs, "orac"))  # fmt: skip


def write_judge(
    run_dir: Path,
    name: str,
    protocol: str,
    verdicts: Mapping[str, Sequence[Any]],
    weights: Mapping[str, float] | None = None,
) -> Path:
    """A judge store exactly as the judges work writes it: one line per (item, repeat).

    ``verdicts[id]`` lists one entry per repeat: a bool (equivalence), a dict of rubric scores,
    the string "rule" (settled by rules) or None (an unparseable reply).
    """
    folder = run_dir / "judges" / name
    folder.mkdir(parents=True)
    dims = ["equivalent"] if protocol == "equivalence" else list(RUBRIC)
    meta = {
        "schema": 1, "name": name, "judge": f"openai:{name}?base_url=http://127.0.0.1:1",
        "protocol": {"name": protocol, "dimensions": dims,
                     "weights": dict(weights or ({} if protocol == "equivalence" else
                                                 dict(zip(RUBRIC, (1, 1, 4, 4), strict=True)))),
                     "template_sha256": "0" * 64},
        "scope": "all", "repeats": max(len(v) for v in verdicts.values()),
        "created": "2026-01-01T00:00:00+00:00",
    }  # fmt: skip
    (folder / "judge.json").write_text(json.dumps(meta), encoding="utf-8")
    lines = []
    for item, repeats in verdicts.items():
        for repeat, verdict in enumerate(repeats):
            lines.append(json.dumps(_line(item, repeat, verdict, meta["protocol"]["weights"])))
    (folder / "judgements.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _line(item: str, repeat: int, verdict: Any, weights: Mapping[str, float]) -> dict[str, Any]:
    line: dict[str, Any] = {
        "id": item, "repeat": repeat, "by": "judge", "fingerprint": "f" * 64, "output": "{}",
        "status": "ok", "verdict": None, "score": None, "error": None, "latency": 0.01,
        "usage": {}, "cached": False,
    }  # fmt: skip
    if verdict == "rule":
        line.update(by="rule", fingerprint=None, output=None, score=1.0)
    elif verdict is None:
        line.update(status="unparseable")
    elif isinstance(verdict, bool):
        line.update(verdict={"equivalent": verdict, "reason": "r"}, score=float(verdict))
    else:  # the item score the store keeps: Σ wᵢsᵢ / (10·Σ wᵢ)
        score = sum(weights[d] * verdict[d] for d in weights) / (10 * sum(weights.values()))
        line.update(verdict={"scores": dict(verdict), "rationale": "r"}, score=score)
    return line


def sheet_rows(path: Path) -> list[dict[str, Any]]:
    """The ratings sheet of an exported xlsx as dicts (header → cell)."""
    from openpyxl import load_workbook

    workbook = load_workbook(path)
    sheet = workbook["ratings"]
    rows = list(sheet.iter_rows(values_only=True))
    return [dict(zip(rows[0], row, strict=True)) for row in rows[1:]]


def fill_xlsx(path: Path, out: Path, fill: Mapping[str, Mapping[str, Any]]) -> Path:
    """Copy an exported xlsx with cells filled in: ``fill[id][column] = value``."""
    from openpyxl import load_workbook

    workbook = load_workbook(path)
    sheet = workbook["ratings"]
    header = [c.value for c in sheet[1]]
    for row in sheet.iter_rows(min_row=2):
        item = row[header.index("id")].value
        for column, value in fill.get(str(item), {}).items():
            row[header.index(column)].value = value
    workbook.save(out)
    return out


def medlens(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m medlens ARGS`` in a real subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "medlens", *map(str, args)],
        capture_output=True, text=True, env=dict(os.environ), cwd=cwd, timeout=300,
    )  # fmt: skip


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under a folder with its bytes (to prove a refused command changed nothing)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def invoke(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The same command in this process (typer's runner): fast, for the many bad-input cases."""
    from typer.testing import CliRunner

    from medlens.cli import app

    result = CliRunner().invoke(app, [str(a) for a in args])
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


def copy_runs(base: tuple[Path, Path], folder: Path) -> tuple[Path, Path]:
    """Fresh copies of module-wide runs (so a test can write judges and ratings into them)."""
    import shutil

    copies = []
    for run in base:
        target = folder / "runs" / run.name
        shutil.copytree(run, target)
        copies.append(target)
    return copies[0], copies[1]
