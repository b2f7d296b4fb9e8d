"""Benchmarks whose questions share images, study files, and records read back, for the study
and dispatch tests (and bench/study.py)."""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from PIL import Image


def write_images(folder: Path, count: int) -> list[str]:
    """`count` distinct small PNGs; their file names."""
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for index in range(count):
        buffer = io.BytesIO()
        Image.new("RGB", (12, 12), (index * 37 % 256, index * 11 % 256, 90)).save(buffer, "PNG")
        name = f"img{index}.png"
        (folder / name).write_bytes(buffer.getvalue())
        names.append(name)
    return names


def write_shared_bench(
    folder: Path,
    n_items: int,
    n_images: int,
    *,
    prefix: str = "q",
    shuffle: int | None = 1,
    kinds: tuple[str, ...] = ("choice",),
) -> tuple[str, dict[str, str]]:
    """A jsonl benchmark of `n_items` questions over `n_images` images (several questions per
    image), written in a shuffled order (seeded) unless `shuffle` is None. Returns (spec, golds):
    gold answers by the ``[[key]]`` marker each question carries (``gold_by_marker``)."""
    images = write_images(folder, n_images)
    golds: dict[str, str] = {}
    rows = []
    for index in range(n_items):
        key = f"{prefix}{index}"
        kind = kinds[index % len(kinds)]
        row: dict[str, Any] = {
            "id": key,
            "question": f"[[{key}]] What does image {index % n_images} show?",
            "kind": kind,
            "images": [images[index % n_images]],
            "meta": {"image_id": images[index % n_images], "task": f"t{index % 3}",
                     "answer_type": "open" if kind == "open" else "closed"},
        }  # fmt: skip
        if kind == "open":
            row["answer"] = golds[key] = ["pneumoperitoneum", "femur", "cardiomegaly"][index % 3]
        else:
            row["options"] = {"A": "axial", "B": "coronal", "C": "sagittal", "D": "oblique"}
            row["answer"] = golds[key] = "ABCD"[(index * 7) % 4]
        rows.append(row)
    if shuffle is not None:
        random.Random(shuffle).shuffle(rows)
    path = folder / "bench.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return f"jsonl:{path}", golds


def records(run_dir: Path) -> dict[str, dict[str, Any]]:
    """A run's records by id, without what is measured rather than computed (latency, whether
    the cache answered, retries)."""
    out = {}
    for line in (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for key in ("latency", "cached", "retries"):
            record.pop(key, None)
        out[record["id"]] = record
    return out


def record_ids(run_dir: Path) -> list[str]:
    """Ids in file order (each once after a clean finish)."""
    lines = (run_dir / "records.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["id"] for line in lines]


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value))


def write_study(
    path: Path,
    name: str,
    models: Mapping[str, Any],
    benchmarks: Mapping[str, Any],
    judges: Mapping[str, Mapping[str, Any]] | None = None,
    boards: list[Mapping[str, Any]] | None = None,
    **top: Any,
) -> Path:
    """A study file: each model and benchmark a spec string or a table of keys."""
    lines = [f"name = {toml_value(name)}"] + [f"{k} = {toml_value(v)}" for k, v in top.items()]
    lines.append("[models]")
    lines += [f"{label} = {toml_value(value)}" for label, value in models.items()]
    lines.append("[benchmarks]")
    lines += [f"{label} = {toml_value(value)}" for label, value in benchmarks.items()]
    for label, table in (judges or {}).items():
        lines.append(f"[judges.{label}]")
        lines += [f"{k} = {toml_value(v)}" for k, v in table.items()]
    for board in boards or []:
        lines.append("[[boards]]")
        lines += [f"{k} = {toml_value(v)}" for k, v in board.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def openai_spec(base_url: str, name: str = "m", retries: int = 6, **options: str) -> str:
    """An openai: spec for a loopback server: quick retries, no key."""
    extra = "".join(f"&{k}={v}" for k, v in options.items())
    return (f"openai:{name}?base_url={base_url}&max_retries={retries}&backoff=0.002"
            f"&backoff_max=0.02{extra}")  # fmt: skip


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[str]) -> None:
    """Until `condition` holds (the study process must still be alive meanwhile)."""
    deadline = time.monotonic() + 120  # a bound on a hung test, not a timing assumption
    while time.monotonic() < deadline:
        if condition():
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the study never got that far")


def start_study(args: list[str]) -> subprocess.Popen[str]:
    """`medlens study` in a process of its own (so that a signal reaches it alone)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-m", "medlens", *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
