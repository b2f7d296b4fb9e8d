"""``--log mlflow[:URI]`` / ``--log wandb``: one tracking run per medlens run, found again by the
run's key on every later log (a resumed or re-judged run updates it, never adds a second one).

MLflow: the run is looked up by the tag ``medlens.run_key`` in the experiment ``medlens``
(``MLFLOW_EXPERIMENT_NAME`` overrides); the URI is the one given, else ``MLFLOW_TRACKING_URI``.
W&B: the run id is derived from the key and opened with ``resume="allow"``; ``WANDB_MODE=offline``
keeps it on disk (``wandb sync`` later). Both are optional extras (``pip install medlens[track]``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import SpecError
from medlens.core.notation import bad, tagged
from medlens.tracking.payload import Payload, run_payload

BACKENDS = ("mlflow", "wandb")


@dataclass(frozen=True)
class LogTarget:
    backend: str
    uri: str | None = None


def parse_log_target(text: str) -> LogTarget:
    """``mlflow``, ``mlflow:URI`` or ``wandb``; anything else is a SpecError (exit 2, before work)."""
    backend, uri, _ = tagged(text)
    if backend not in BACKENDS:
        raise bad("--log", text, "expected mlflow[:URI] or wandb")
    if backend == "wandb" and uri:
        raise SpecError("--log wandb takes no URI (WANDB_PROJECT, WANDB_MODE and WANDB_DIR set it)")
    from medlens.core.extras import require_extra

    require_extra(f"--log {backend}", "track", (backend,))
    return LogTarget(backend, uri or None)


def log_runs(target: LogTarget, run_dirs: Sequence[Path]) -> list[str]:
    """Log each run; returns one warning per failure (a tracking failure never fails a command)."""
    warnings = []
    for run_dir in run_dirs:
        try:
            payload = run_payload(Path(run_dir))
            if target.backend == "mlflow":
                log_mlflow(payload, target.uri)
            else:
                log_wandb(payload)
        except Exception as exc:
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            warnings.append(
                f"warning: --log {target.backend}: {Path(run_dir).name} not logged ({first}); the run itself is unaffected"
            )
    return warnings


def log_mlflow(payload: Payload, uri: str | None) -> str:
    """Create or update the MLflow run of `payload`; returns its run id."""
    import logging

    from mlflow import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.WARNING)  # its table-creation notes on stderr
    logging.getLogger("alembic").setLevel(logging.WARNING)
    client = MlflowClient(tracking_uri=uri or os.environ.get("MLFLOW_TRACKING_URI"))
    name = os.environ.get("MLFLOW_EXPERIMENT_NAME", "medlens")
    experiment = client.get_experiment_by_name(name)
    experiment_id = experiment.experiment_id if experiment else client.create_experiment(name)
    found = client.search_runs(
        [experiment_id], filter_string=f"tags.`medlens.run_key` = '{payload.key}'", max_results=1
    )
    if found:
        run_id = found[0].info.run_id
    else:
        run_id = client.create_run(
            experiment_id, run_name=payload.name, tags=payload.tags
        ).info.run_id
        for key, value in payload.params.items():
            client.log_param(run_id, key, value)
    from mlflow.entities import Metric

    stamp = int(time.time() * 1000)
    client.log_batch(run_id, metrics=[Metric(k, v, stamp, 0) for k, v in payload.metrics.items()])
    with tempfile.TemporaryDirectory() as folder:
        for file_name, text in (("report.html", payload.html), ("protocol_card.txt", payload.card)):
            (Path(folder) / file_name).write_text(text, encoding="utf-8")
            client.log_artifact(run_id, str(Path(folder) / file_name))
    client.set_terminated(run_id)
    return run_id


def wandb_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:24]


def log_wandb(payload: Payload) -> Any:
    """Create or resume the W&B run of `payload` (its id derived from the run's key)."""
    import wandb

    run = wandb.init(
        project=os.environ.get("WANDB_PROJECT", "medlens"), id=wandb_id(payload.key),
        name=payload.name, resume="allow", config=payload.params, tags=["medlens"],
        settings=wandb.Settings(silent=True, console="off"),
    )  # fmt: skip
    try:
        run.summary.update({**payload.metrics, **payload.tags})
        with tempfile.TemporaryDirectory() as folder:
            page = Path(folder) / "report.html"
            page.write_text(payload.html, encoding="utf-8")
            run.log({"report": wandb.Html(page.read_text(encoding="utf-8"))})
            artifact = wandb.Artifact(f"medlens-report-{wandb_id(payload.key)}", type="report")
            artifact.add_file(str(page))
            card = Path(folder) / "protocol_card.txt"
            card.write_text(payload.card, encoding="utf-8")
            artifact.add_file(str(card))
            run.log_artifact(artifact)
    finally:
        run.finish()
    return run
