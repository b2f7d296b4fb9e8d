"""Published reference scores shipped as package data, and calibration of a run against them.

Each table is ``medlens/data/references/<name>.csv`` with columns ``model, score, scale, split,
metric, where, source``: the number exactly as published (``scale`` 100 for percentages), the
metric it is, the slice of the benchmark it covers (``axis=value;axis=value``, empty = all
items) and where it was published. :func:`load_references` returns scores in [0, 1].
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError

REFERENCE_NAMES = ("gmai-val", "gmai-test", "medcmr", "mmbu")
REFERENCE_BENCHMARKS = {
    "gmai-val": ("gmai", "vlmeval"),
    "gmai-test": ("gmai", "vlmeval"),
    "medcmr": ("medcmr",),
    "mmbu": ("mmbu",),
}
"""The loaders whose runs a published table speaks for (VLMEvalKit TSVs may hold GMAI-MMBench)."""


def check_comparable(name: str, benchmark: str, where: Path | str) -> None:
    """Refuse published scores of another benchmark beside a run (`board`, `calibrate`)."""
    allowed = REFERENCE_BENCHMARKS.get(name, ())
    if allowed and benchmark not in allowed:
        raise SpecError(
            f"{where}: --reference {name} holds published {'/'.join(allowed)} scores, but the "
            f"run is on {benchmark!r}; the numbers would not be comparable"
        )
COLUMNS = ("model", "score", "scale", "split", "metric", "where", "source")


def load_references(name: str) -> list[dict[str, Any]]:
    """Rows of a published table: ``model``, ``score`` in [0, 1], ``split``, ``source`` (+ more)."""
    if name not in REFERENCE_NAMES:
        raise SpecError(
            f"--reference {name!r}: unknown reference (known: {', '.join(REFERENCE_NAMES)})"
        )
    text = resources.files("medlens").joinpath(f"data/references/{name}.csv").read_text("utf-8")
    rows = []
    for number, raw in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        rows.append(_row(name, number, raw))
    return rows


def _row(name: str, line: int, raw: dict[str, str]) -> dict[str, Any]:
    missing = [column for column in COLUMNS if raw.get(column) is None]
    if missing:  # a packaging bug, not a user error: say exactly where
        raise ValueError(f"references/{name}.csv, line {line}: missing {', '.join(missing)}")
    score = float(raw["score"]) / float(raw["scale"])
    if not 0.0 <= score <= 1.0:
        raise ValueError(
            f"references/{name}.csv, line {line}: score {raw['score']} outside 0..scale"
        )
    return {
        "model": raw["model"],
        "score": score,
        "split": raw["split"],
        "metric": raw["metric"],
        "where": parse_where(raw["where"]),
        "source": raw["source"],
    }


def parse_where(text: str) -> dict[str, str]:
    """``axis=value;axis=value`` → mapping (empty text → every item)."""
    pairs = [part.split("=", 1) for part in text.split(";") if part.strip()]
    return {axis.strip(): value.strip() for axis, value in pairs}


def find_reference(name: str, model: str, split: str | None = None) -> dict[str, Any]:
    """The one row of table `name` for `model` (case-insensitive), narrowed by `split`."""
    rows = load_references(name)
    wanted = model.casefold()
    matches = [row for row in rows if row["model"].casefold() == wanted]
    if not matches:
        known = ", ".join(sorted({row["model"] for row in rows}))
        raise SpecError(f"--as {model!r}: no such model in reference {name} (known: {known})")
    if split is not None:
        matches = [row for row in matches if row["split"] == split]
    if len(matches) != 1:
        splits = ", ".join(row["split"] for row in rows if row["model"].casefold() == wanted)
        raise SpecError(f"--as {model!r} in {name}: choose one with --split ({splits})")
    return matches[0]


def calibrate(
    run_dir: Path | str, name: str, model: str, split: str | None = None
) -> dict[str, Any]:
    """Does the run reproduce the published score within its 95% CI, and by how much does it differ?"""
    import numpy as np

    from medlens.analysis.derived import fresh_score_table
    from medlens.analysis.score_table import cell
    from medlens.runs.store import RunStore, read_run_file

    reference = find_reference(name, model, split)
    store = RunStore(Path(run_dir), read_run_file(Path(run_dir)))  # the scores: the score table
    check_comparable(name, str(store.run["spec"]["benchmark"].get("name", "")), store.path)
    table = fresh_score_table(store.path)
    mask = np.ones(len(table.ids), dtype=bool)
    for axis, value in reference["where"].items():
        if axis not in table.meta:
            raise SpecError(
                f"{store.path}: items have no {axis!r} axis, which {name} {reference['split']} needs"
            )
        mask &= table.meta[axis] == value
    run_cell = cell(table, mask)
    if not run_cell["n"]:
        raise SpecError(
            f"{store.path}: no scored item in {reference['split']} ({reference['where'] or 'all items'})"
        )
    lo, hi = run_cell["ci"]
    published = reference["score"]
    return {
        "run": store.path.name,
        "reference": {**reference, "name": name},
        "run_score": {"n": run_cell["n"], "score": run_cell["score"], "ci": [lo, hi]},
        "difference": run_cell["score"] - published,
        "difference_ci": [lo - published, hi - published],
        "reproduces": bool(lo <= published <= hi),
        "comparable": reference["metric"] == "accuracy",
    }


def calibration_lines(result: dict[str, Any]) -> list[str]:
    """The text `medlens calibrate` prints."""
    ref, run = result["reference"], result["run_score"]
    lo, hi = run["ci"]
    dlo, dhi = result["difference_ci"]
    verdict = "reproduces" if result["reproduces"] else "does NOT reproduce"
    lines = [
        f"{result['run']} vs {ref['model']} ({ref['name']} {ref['split']}, {ref['metric']}): "
        f"published {ref['score']:.4f}",
        f"run: {run['score']:.4f} (95% CI {lo:.4f}–{hi:.4f}, n={run['n']})",
        f"difference run − published: {result['difference']:+.4f} (95% CI {dlo:+.4f} to {dhi:+.4f})",
        f"the run {verdict} the published number within its 95% CI",
        f"source: {ref['source']}",
    ]
    if not result["comparable"]:
        lines.append(
            f"caution: the published number is {ref['metric']}, the run's score is medlens's "
            "rule score; they measure different things"
        )
    return lines
