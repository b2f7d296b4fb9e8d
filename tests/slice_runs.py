"""Runs written straight to disk with chosen scores and axes, for slice, compare and report tests."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from medlens.core.items import Item
from medlens.runs.store import RunStore

AXES = ("dept", "level", "mod")


def spec(content_hash: str = "h1", has_answers: bool = True) -> dict[str, Any]:
    bench = {"name": "t", "spec": "t", "split": "val", "n_items": 0, "has_answers": has_answers,
             "content_hash": content_hash, "axes": list(AXES), "description": "test"}  # fmt: skip
    return {"benchmark": bench, "model": "m", "prompt": "medlens", "extract": "medlens",
            "probe": None, "seed": 0, "params": {}}  # fmt: skip


def write_run(
    path: Path, rows: list[dict[str, Any]], run_spec: dict[str, Any] | None = None
) -> Path:
    """A run directory by hand: each row gives meta, score (None: no gold), status, error."""
    items = [
        Item(id=str(i), question=f"q{i}", kind="choice", options={"A": "a", "B": "b", "C": "c", "D": "d"},
             answer=None if row.get("score", 0.0) is None else "A", meta=row["meta"])
        for i, row in enumerate(rows)
    ]  # fmt: skip
    store = RunStore.open_or_create(path, run_spec or spec(), items)
    for i, row in enumerate(rows):
        error = row.get("error")
        store.append({
            "id": str(i), "output": None if error else "A", "error": error,
            "extraction": None if error else {"answer": "A", "status": row.get("status", "ok"), "method": "t"},
            "score": None if error else row.get("score", 0.0),
            "vlmeval": None if error else {"answer": "A", "status": "ok", "method": "t", "score": row.get("score", 0.0)},
            "scores": {},
        })  # fmt: skip
    store.close()
    return path


def random_rows(n: int, seed: int = 0, image_every: int = 0) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        meta = {"dept": rng.choice(["Radiology", "Pathology", "Dermatology"]),
                "level": rng.choice(["image", "box", "mask"]), "mod": rng.choice(["CT", "MR"])}  # fmt: skip
        if image_every:
            meta["image_id"] = str(i // image_every)
        status = "unparsed" if rng.random() < 0.1 else "ok"
        score = (
            0.0
            if status == "unparsed"
            else float(rng.random() < 0.4 + 0.2 * (meta["dept"] == "Pathology"))
        )
        rows.append({"meta": meta, "score": score, "status": status})
    return rows
