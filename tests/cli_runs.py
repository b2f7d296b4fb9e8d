"""`medlens run` as the tests call it: one named run through typer's runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from medlens.cli import app


def run_args(bench: str, model: str, out: Path, name: str, *extra: str) -> list[str]:
    """The arguments of ``medlens run`` for the run ``out/name``."""
    return ["run", "--bench", bench, "--model", model, "--out", str(out), "--name", name, *extra]


def invoke_run(bench: str, model: str, out: Path, name: str, *extra: str) -> Result:
    """``medlens run`` for the run ``out/name``, whatever its exit code."""
    return CliRunner().invoke(app, run_args(bench, model, out, name, *extra))


def named_run(bench: str, model: str, out: Path, name: str, *extra: str) -> Path:
    """``medlens run`` for the run ``out/name``, which must succeed; the run folder."""
    result = invoke_run(bench, model, out, name, *extra)
    assert result.exit_code == 0, result.output
    return out / name


def evaluate(options: Any, *callbacks: Any, **named: Any) -> Any:
    """:func:`medlens.execution.evaluate.evaluate` as the CLI calls it, then its results derived
    (the outcome with ``results`` beside ``store``, ``done_before`` and ``ran``)."""
    from types import SimpleNamespace

    from medlens.analysis.artifacts import results_after_writing
    from medlens.execution.evaluate import evaluate as run_evaluation

    outcome = run_evaluation(options, *callbacks, **named)
    results = results_after_writing(outcome.store.view())
    return SimpleNamespace(**vars(outcome), results=results)


def run_options(**values: Any) -> Any:
    """A RunOptions built as the CLI and the API build it (spec texts and strategy parsed)."""
    from medlens.api import parsed_run_values
    from medlens.execution.evaluate import RunOptions

    return RunOptions(**parsed_run_values(values))
