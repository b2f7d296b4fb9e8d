"""The documented Python API (`docs/python-api.md`): run an evaluation from code.

`medlens.evaluate` is this module's :func:`evaluate`; `medlens.load_benchmark` and
`medlens.load_results` are the loader and the results builder the commands use.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError


def evaluate(bench: str, model: str, **options: Any) -> dict[str, Any]:
    """Run (or resume) `model` on `bench` as ``medlens run`` does; the run's results.json content.

    `options` are the long options of ``medlens run`` with underscores (``out``, ``name``,
    ``limit``, ``concurrency``, ``prompt``, ``extract``, ``probe``, ``seed``, ``cache``,
    ``retry_errors``, …). The results carry ``"run_dir"``, the run directory.
    """
    from medlens.analysis.results import build_results
    from medlens.execution.evaluate import RunOptions
    from medlens.execution.evaluate import evaluate as run_evaluation

    known = {f.name for f in fields(RunOptions)} - {"bench", "model"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise SpecError(
            f"evaluate: unknown option(s) {', '.join(unknown)} (known: {', '.join(sorted(known))})"
        )
    if "out" in options:
        options["out"] = Path(options["out"])
    outcome = run_evaluation(
        RunOptions(bench=bench, model=model, **options), derive_results=build_results
    )
    return {**outcome.results, "run_dir": str(outcome.store.path)}
