"""Model metadata (`--meta FILE.csv`): scores against model size, training data, medical or not.

The file has a ``run`` column (run folder names) and any other columns. A column whose first
non-empty value is a number is numeric, and every later value must be one too; any other
column is categorical. Numeric columns get Spearman and Pearson correlations with the score
(scipy), each with a 95% CI from Fisher's z (Pearson: scipy's own interval; Spearman: with
Bonett and Wright's variance (1 + r²/2)/(n − 3)), and a least-squares line (scipy
``linregress``), overall and per value of each --by axis. Categorical columns get, for every two
groups, the share of per-item comparisons between a model of one group and a model of the other
that the first wins (ties left out), with a paired bootstrap CI over images.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import InputError

MAX_GROUPS = 8
"""A categorical column with more values gets no win-share table (too many group pairs)."""


@dataclass(frozen=True)
class ModelMeta:
    path: Path
    numeric: dict[str, dict[str, float]]
    """column → run → value (runs with an empty cell left out)."""
    categorical: dict[str, dict[str, str]]


def read_meta(path: Path) -> ModelMeta:
    """Parse the CSV; a bad file is an InputError naming the line and column."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            rows = list(csv.reader(handle))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the metadata file ({exc})") from None
    if not rows:
        raise InputError(path, None, "empty file (a header with a 'run' column is needed)")
    header = [h.strip() for h in rows[0]]
    if "run" not in [h.lower() for h in header]:
        raise InputError(path, "line 1", f"no 'run' column (columns: {', '.join(header)})")
    run_column = [h.lower() for h in header].index("run")
    columns = {i: h for i, h in enumerate(header) if i != run_column and h}
    raw: dict[str, dict[str, tuple[int, str]]] = {h: {} for h in columns.values()}
    seen: dict[str, int] = {}
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header):
            raise InputError(path, f"line {line}", f"{len(row)} cells but {len(header)} columns")
        run = row[run_column].strip() if run_column < len(row) else ""
        if not run:
            raise InputError(path, f"line {line}", "column 'run': empty")
        if run in seen:
            raise InputError(
                path, f"line {line}", f"column 'run': {run!r} again (line {seen[run]})"
            )
        seen[run] = line
        for i, name in columns.items():
            value = row[i].strip() if i < len(row) else ""
            if value:
                raw[name][run] = (line, value)
    return _typed(path, raw)


def _typed(path: Path, raw: dict[str, dict[str, tuple[int, str]]]) -> ModelMeta:
    numeric: dict[str, dict[str, float]] = {}
    categorical: dict[str, dict[str, str]] = {}
    for name, cells in raw.items():
        if not cells:
            continue
        first_line, first = min(cells.values())
        if _number(first) is None:
            categorical[name] = {run: value for run, (_, value) in cells.items()}
            continue
        numeric[name] = {}
        for run, (line, value) in cells.items():
            number = _number(value)
            if number is None:
                raise InputError(
                    path,
                    f"line {line}",
                    f"column {name!r}: {value!r} is not a number "
                    f"(the column is numeric: line {first_line} has {first!r})",
                )
            numeric[name][run] = number
    return ModelMeta(path, numeric, categorical)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def correlation(x: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """Spearman, Pearson (with 95% CIs) and the least-squares line of y on x."""
    from scipy import stats

    n = int(x.size)
    out: dict[str, Any] = {"n": n, "spearman": None, "pearson": None,
                           "ci": {"spearman": None, "pearson": None},
                           "slope": None, "intercept": None, "r2": None, "slope_ci": None}  # fmt: skip
    if n < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return out
    pearson = stats.pearsonr(x, y)
    spearman = float(stats.spearmanr(x, y).statistic)
    fit = stats.linregress(x, y)
    half = stats.t.ppf(0.975, n - 2) * fit.stderr
    out.update(
        spearman=spearman,
        pearson=float(pearson.statistic),
        slope=float(fit.slope),
        intercept=float(fit.intercept),
        r2=float(fit.rvalue**2),
        slope_ci=[float(fit.slope - half), float(fit.slope + half)],
    )
    if n >= 4:
        interval = pearson.confidence_interval(0.95)
        out["ci"] = {
            "spearman": spearman_ci(spearman, n),
            "pearson": [float(interval.low), float(interval.high)],
        }
    return out


def spearman_ci(r: float, n: int, level: float = 0.95) -> list[float] | None:
    """Fisher-z interval of Spearman's rho with Bonett–Wright's variance (n ≥ 4)."""
    from scipy.stats import norm

    if n < 4:
        return None
    if abs(r) >= 1.0:
        return [float(r), float(r)]
    z = math.atanh(r)
    half = norm.ppf(0.5 + level / 2) * math.sqrt((1 + r * r / 2) / (n - 3))
    return [math.tanh(z - half), math.tanh(z + half)]


def correlations(
    meta: ModelMeta,
    runs: Sequence[str],
    overall: Sequence[float],
    by: dict[str, dict[str, list[dict[str, Any]]]],
) -> dict[str, dict[str, Any]]:
    """{column: correlation over the runs that have a value, plus "by": {axis: {value: …}}}."""
    out: dict[str, dict[str, Any]] = {}
    for column, values in meta.numeric.items():
        present = [i for i, run in enumerate(runs) if run in values]
        x = np.array([values[runs[i]] for i in present], dtype=float)
        result = correlation(x, np.asarray(overall, dtype=float)[present])
        result["missing"] = [run for run in runs if run not in values]
        result["by"] = {
            axis: {
                value: correlation(x, np.array([cells[i]["score"] for i in present], dtype=float))
                for value, cells in table.items()
            }
            for axis, table in by.items()
        }
        out[column] = result
    return out


def pair_correlations(meta: ModelMeta, pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Each pair's win rate (share of items the tuned model wins) and difference against the
    tuned run's value of each numeric column (MMBU: win rate on training-set size)."""
    out: dict[str, Any] = {}
    for column, values in meta.numeric.items():
        present = [p for p in pairs if p["tuned"] in values]
        if not present:
            continue
        x = np.array([values[p["tuned"]] for p in present], dtype=float)
        wins = [p["overall"]["wins"] / p["overall"]["n"] for p in present]
        differences = [p["overall"]["difference"] for p in present]
        out[column] = {
            "win_rate": correlation(x, np.array(wins, dtype=float)),
            "difference": correlation(x, np.array(differences, dtype=float)),
        }
    return out
