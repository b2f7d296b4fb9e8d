"""Experiment tracking: a finished run's spec, protocol, scores with intervals, token use and
HTML report logged to MLflow or Weights & Biases (``--log mlflow[:URI]`` / ``--log wandb``), one
tracking run per medlens run. Imports ``report`` (the HTML report it logs) and everything below;
only ``study`` and ``cli`` import it. A tracking failure is a warning, never the run's failure."""

from __future__ import annotations

from medlens.tracking.log import LogTarget, log_runs, parse_log_target

__all__ = ["LogTarget", "log_runs", "parse_log_target"]
