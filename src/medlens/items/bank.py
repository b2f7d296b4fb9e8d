"""``BANK.json``: the item bank fitted from many runs on one benchmark, and reading it back.

``{"schema": 1, "benchmark": {"name", "spec", "split", "n_items", "content_hash"},
"items": {id: {"difficulty", "discrimination", "guess", "p_correct", "n_runs"}},
"runs": {run: {"ability", "se", "model", "score", "n"}},
"fit": {"method", "log_likelihood", "converged", "held_out_log_loss",
"held_out_baseline_log_loss", "held_out_cells", "iterations", "priors"}, "medlens_version"}``.

The held-out log loss comes from a first fit with a fixed 10% of the observed (run, item) cells
hidden (seeded, so the same runs give the same bytes); the bank's parameters come from a second
fit on every cell, started from the first (a few rounds). ``held_out_baseline_log_loss`` is the same cells predicted by each item's
observed share right (what an item model must beat).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import InputError, MedlensError
from medlens.items import irt
from medlens.items.responses import Responses, load_responses

SCHEMA = 1
HELD_OUT_SHARE = 0.1
METHOD = "2PL with the item's chance level as fixed guessing floor; joint MAP (Fisher scoring)"
BENCHMARK_KEYS = ("name", "spec", "split", "n_items", "content_hash", "content_hash_version")
"""What a bank (and an audit) records of the runs' benchmark."""


@dataclass(frozen=True)
class Bank:
    """A read ``BANK.json`` as arrays in the bank's item order."""

    path: Path
    benchmark: dict[str, Any]
    ids: list[str]
    difficulty: np.ndarray
    discrimination: np.ndarray
    guess: np.ndarray
    p_correct: np.ndarray
    abilities: dict[str, tuple[float, float]]
    """Run → (ability, se) of the calibration runs."""
    sha256: str

    @property
    def ability_range(self) -> tuple[float, float]:
        values = [theta for theta, _ in self.abilities.values()]
        return min(values), max(values)

    def predict(self, theta: float) -> np.ndarray:
        """P(correct) of every bank item for a run of ability `theta`."""
        return irt.probability(np.array([theta]), self.discrimination, self.difficulty, self.guess)[
            0
        ]


def fit_bank(paths: Sequence[Path]) -> dict[str, Any]:
    """Fit the item model on the runs; the content of ``BANK.json``."""
    responses = load_responses(paths)
    refuse_probe_runs(responses)
    if not responses.observed.any():
        raise MedlensError(
            f"{responses.paths[0]}: the runs have no scored items (a split without answers?); "
            "an item model needs scores"
        )
    return bank_content(responses)


def refuse_probe_runs(responses: Responses) -> None:
    """A probed run (no image, shuffled options …) is not the model's own answer to the items."""
    for path, spec in zip(responses.paths, responses.specs, strict=True):
        if spec.get("probe"):
            raise MedlensError(
                f"{path}: made with --probe {spec['probe']}, not the model's own answers; give "
                "no-image probe runs to `medlens items audit --probe-runs`"
            )


def bank_content(responses: Responses) -> dict[str, Any]:
    """Fit (held-out pass, then all cells) and lay the result out as ``BANK.json``."""
    observed = responses.observed
    guess = responses.guess()
    scores = np.clip(np.nan_to_num(responses.scores), 0.0, 1.0)
    hidden = observed & (np.random.default_rng(0).random(observed.shape) < HELD_OUT_SHARE)
    held_out, first = _held_out(scores, observed, hidden, guess)
    fit = irt.fit_items(scores, observed, guess, start=first)
    return _layout(responses, fit, held_out, scores, observed)


def _held_out(
    scores: np.ndarray, observed: np.ndarray, hidden: np.ndarray, guess: np.ndarray
) -> tuple[dict[str, Any], irt.ItemFit | None]:
    """Log loss of the hidden cells under a fit without them, and under items' shares right;
    and that fit (the full fit starts from it)."""
    if not hidden.any():
        return {
            "held_out_log_loss": None,
            "held_out_baseline_log_loss": None,
            "held_out_cells": 0,
        }, None
    train = observed & ~hidden
    fit = irt.fit_items(scores, train, guess)
    p = irt.probability(fit.theta, fit.discrimination, fit.difficulty, guess)
    share = np.sum(scores * train, axis=0) / np.maximum(train.sum(axis=0), 1)
    baseline = np.broadcast_to(np.clip(share, 0.01, 0.99), scores.shape)
    cells = int(hidden.sum())
    return {
        "held_out_log_loss": _round(-irt.log_likelihood(scores, hidden, p) / cells),
        "held_out_baseline_log_loss": _round(-irt.log_likelihood(scores, hidden, baseline) / cells),
        "held_out_cells": cells,
    }, fit


def _round(value: float) -> float:
    return round(float(value), 6)


def _layout(
    responses: Responses,
    fit: irt.ItemFit,
    held_out: dict[str, Any],
    scores: np.ndarray,
    observed: np.ndarray,
) -> dict[str, Any]:
    from medlens.core.version import __version__

    n_runs = observed.sum(axis=0)
    p_correct = np.sum(scores * observed, axis=0) / np.maximum(n_runs, 1)
    items = {
        item.id: {
            "difficulty": _round(fit.difficulty[j]),
            "discrimination": _round(fit.discrimination[j]),
            "guess": _round(fit.guess[j]),
            "p_correct": _round(p_correct[j]) if n_runs[j] else None,
            "n_runs": int(n_runs[j]),
        }
        for j, item in enumerate(responses.items)
    }
    run_n = observed.sum(axis=1)
    runs = {
        name: {
            "ability": _round(fit.theta[i]),
            "se": _round(fit.theta_se[i]),
            "model": str(responses.specs[i].get("model", "")),
            "score": _round(np.sum(scores[i] * observed[i]) / max(run_n[i], 1)),
            "n": int(run_n[i]),
        }
        for i, name in enumerate(responses.runs)
    }
    bench = responses.benchmark
    return {
        "schema": SCHEMA,
        "benchmark": {key: bench.get(key) for key in BENCHMARK_KEYS},
        "items": items,
        "runs": runs,
        "fit": {
            "method": METHOD,
            "log_likelihood": _round(fit.log_likelihood),
            "converged": fit.converged,
            **held_out,
            "iterations": fit.iterations,
            "priors": {"ability": "N(0, 1)", "difficulty": "N(0, 3²)", "discrimination": "N(1, 1)"},
        },
        "medlens_version": __version__,
    }


def read_bank(path: Path) -> Bank:
    """Read and check a ``BANK.json`` (one line naming the file and field when it is not one)."""
    import hashlib

    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except OSError as exc:
        raise InputError(path, None, f"cannot read the bank ({exc.strerror or exc})") from None
    except ValueError as exc:
        raise InputError(path, None, f"not JSON ({exc})") from None
    problem = _shape_problem(data)
    if problem:
        raise InputError(path, None, f"not a `medlens items fit` bank: {problem}")
    try:
        return _parse_bank(path, data, hashlib.sha256(raw).hexdigest())
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        field = f"field {exc}" if isinstance(exc, KeyError) else str(exc)
        raise InputError(path, None, f"not a `medlens items fit` bank ({field})") from None


def _shape_problem(data: Any) -> str | None:
    """What keeps `data` from being a bank, said for a user (None: its top level is one)."""
    if not isinstance(data, dict):
        return f"it holds a JSON {type(data).__name__}, not an object"
    if isinstance(data.get("items"), list) and "flags" in data:
        return "it is a `medlens items audit` report; give the BANK.json of `medlens items fit`"
    missing = [key for key in ("benchmark", "items", "runs") if not isinstance(data.get(key), dict)]
    if missing:
        return f"field {missing[0]!r} is missing or not an object"
    return None


def _parse_bank(path: Path, data: Mapping[str, Any], sha256: str) -> Bank:
    items: Mapping[str, Any] = data["items"]
    runs: Mapping[str, Any] = data["runs"]
    if not items or not runs:
        raise ValueError("no items or no runs")
    ids = list(items)

    def column(key: str) -> np.ndarray:
        return np.array([float(items[i][key]) for i in ids])

    return Bank(
        path=path,
        benchmark=dict(data["benchmark"]),
        ids=ids,
        difficulty=column("difficulty"),
        discrimination=column("discrimination"),
        guess=column("guess"),
        p_correct=np.array(
            [np.nan if items[i]["p_correct"] is None else float(items[i]["p_correct"]) for i in ids]
        ),
        abilities={str(r): (float(v["ability"]), float(v["se"])) for r, v in runs.items()},
        sha256=sha256,
    )
