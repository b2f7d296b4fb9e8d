"""Benchmarks and runs for the item-science tests: a jsonl benchmark of choice items, and runs
written straight to disk whose answers follow a known item response model."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from typer.testing import CliRunner, Result

from medlens.cli import app
from medlens.core.fingerprint import describe
from medlens.core.specs import Spec
from medlens.runs.store import RunStore
from medlens.sources import load_benchmark

LETTERS = "ABCD"


def write_bench(
    folder: Path, n: int, per_image: int = 1, name: str = "bench.jsonl", marked: bool = False
) -> Path:
    """`n` four-option choice items; `per_image` consecutive items share an image id; `marked`:
    each question carries its ``[[id]]`` marker (a loopback server's ``gold_by_marker``)."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(n):
        meta = {"modality": ("CT", "MR", "US")[i % 3], "task": ("a", "b")[i % 2]}
        if per_image > 1:
            meta["image_id"] = f"img{i // per_image}"
        text = f"[[q{i}]] question {i}?" if marked else f"question {i}?"
        item = {"id": f"q{i}", "question": text, "kind": "choice",
                "options": {k: f"option {k}{i}" for k in LETTERS}, "answer": LETTERS[i % 4],
                "meta": meta}  # fmt: skip
        lines.append(json.dumps(item))
    bench = folder / name
    bench.write_text("\n".join(lines) + "\n")
    return bench


def truth(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.lognormal(0.2, 0.3, n), rng.normal(0.0, 1.2, n)


def write_runs(
    out: Path,
    bench: Path,
    abilities: Sequence[float],
    seed: int = 0,
    prefix: str = "r",
    spec_extra: dict[str, Any] | None = None,
    overrides: Mapping[str, Callable[[int], str]] | None = None,
) -> list[Path]:
    """Runs on `bench` whose right/wrong answers follow a 2PL with chance 1/4 (seeded);
    `overrides`: item id → the answer run k gives (scored against the key)."""
    benchmark = load_benchmark(Spec("jsonl", str(bench)))
    items = list(benchmark.items())
    info = describe(benchmark, items)
    a, b = truth(len(items))
    rng = np.random.default_rng(seed)
    paths = []
    for k, theta in enumerate(abilities):
        p = 0.25 + 0.75 / (1 + np.exp(-a * (theta - b)))
        right = rng.random(len(items)) < p
        spec = {"benchmark": info.to_json(), "model": f"model{k}", "prompt": "medlens",
                "extract": "medlens", "probe": None, "seed": 0, "params": {}, **(spec_extra or {})}  # fmt: skip
        path = out / f"{prefix}{k}"
        store = RunStore.open_or_create(path, spec, items)
        for item, ok in zip(items, right, strict=True):
            wrong = LETTERS[(LETTERS.index(str(item.answer)) + 1 + int(rng.integers(3))) % 4]
            answer = str(item.answer) if ok else wrong
            if overrides and item.id in overrides:
                answer = overrides[item.id](k)
                ok = answer == item.answer
            store.append({"id": item.id, "output": answer, "error": None,
                          "extraction": {"answer": answer, "status": "ok", "method": "t"},
                          "score": float(ok), "scores": {}})  # fmt: skip
        store.close()
        paths.append(path)
    return paths


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


def one_error_line(result: Result) -> str:
    """The single `medlens: error:` line of a refused command (exit 2, no traceback)."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("medlens: error: "), result.output
    return lines[0]
