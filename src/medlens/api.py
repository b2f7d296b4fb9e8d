"""The documented Python API (`docs/python-api.md`): run an evaluation from code.

`medlens.evaluate` and `medlens.load_benchmark` are this module's :func:`evaluate` and
:func:`load_benchmark`; `medlens.load_results` is the results builder the commands use. Like the
command line, this module parses spec text once and hands the layers below parsed specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import SpecError
from medlens.core.specs import Spec, parse_spec

if TYPE_CHECKING:
    from medlens.core.items import Benchmark
    from medlens.models.base import Model, ModelContext


def evaluate(bench: str, model: str, **options: Any) -> dict[str, Any]:
    """Run (or resume) `model` on `bench` as ``medlens run`` does; the run's results.json content.

    `options` are the long options of ``medlens run`` with underscores (``out``, ``name``,
    ``limit``, ``concurrency``, ``prompt``, ``extract``, ``probe``, ``seed``, ``cache``,
    ``retry_errors``, …). The results carry ``"run_dir"``, the run directory.
    """
    from medlens.analysis.artifacts import results_after_writing
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
    values = parsed_run_values({"bench": bench, "model": model, **options})
    outcome = run_evaluation(RunOptions(**values))
    results = results_after_writing(outcome.store.view())
    return {**results, "run_dir": str(outcome.store.path)}


def load_benchmark(spec: str | Spec, *, lenient: bool = False) -> Benchmark:
    """Open the benchmark a spec names (``"slake:data/slake?split=test"``, or a parsed one)."""
    from medlens.sources import load_benchmark as open_benchmark

    return open_benchmark(parse_spec(spec) if isinstance(spec, str) else spec, lenient=lenient)


def load_model(spec: str | Spec, context: ModelContext) -> Model:
    """Build the model backend a spec names (``"openai:NAME?base_url=URL"``, or a parsed one)."""
    from medlens.models import load_model as build_model

    return build_model(parse_spec(spec) if isinstance(spec, str) else spec, context)


def parsed_run_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """`run`'s option values with its spec texts and strategy parsed (the CLI uses this too)."""
    from medlens.execution.strategies import parse_strategy

    parsed = dict(values)
    for key in ("bench", "model", "exemplars"):
        if isinstance(parsed.get(key), str):
            parsed[key] = parse_spec(parsed[key])
    if isinstance(parsed.get("strategy"), str):
        parsed["strategy"] = parse_strategy(parsed["strategy"])
    return parsed
