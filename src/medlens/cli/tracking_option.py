"""The ``--log mlflow[:URI]|wandb`` option shared by run, judge, board and study."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from medlens.cli.common import err_console

LOG_HELP = (
    "Log each run (spec, protocol card, scores with intervals, tokens, HTML report) to "
    "mlflow[:URI] or wandb; one tracking run per medlens run, updated on re-logging"
)


def log_target(text: str | None) -> Any:
    """The parsed target (None without --log); a bad one refuses before any work."""
    if not text:
        return None
    from medlens.tracking import parse_log_target

    return parse_log_target(text)


def log_after(target: Any, run_dirs: Sequence[Path]) -> None:
    """Log the runs; each failure is one warning on stderr, never an exit code."""
    if target is None:
        return
    from medlens.tracking import log_runs

    for warning in log_runs(target, run_dirs):
        err_console.print(warning, highlight=False, markup=False, soft_wrap=True)
