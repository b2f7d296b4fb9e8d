"""What is logged for one run: parameters, tags, metrics (scores with their intervals, per axis)
and the HTML report, all read from the run directory (results derived as ``report`` derives them)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.runs.view import RunView

AXES_LOGGED = 12
"""Values per axis logged as metrics at most (the HTML report holds every cell)."""


@dataclass(frozen=True)
class Payload:
    key: str
    """Stable identity of the medlens run (its spec hash and creation time): one tracking run."""
    name: str
    params: dict[str, str]
    tags: dict[str, str]
    metrics: dict[str, float]
    html: str
    card: str


def run_payload(run_dir: Path) -> Payload:
    """Everything logged for the run at `run_dir`: rule scores, plus each judge's scores."""
    from medlens.analysis.score_source import parse_score_source
    from medlens.report import render

    view = RunView(run_dir)
    run = view.run
    spec = run["spec"]
    report = json.loads(str(render(run_dir, "json", parse_score_source("rules"))))
    metrics = score_metrics(report, "")
    judges = view.judge_names()
    for judge in judges:
        judged = json.loads(str(render(run_dir, "json", parse_score_source(f"judge:{judge}"))))
        metrics.update(score_metrics(judged, f"judge.{judge}."))
    metrics.update(token_metrics(run_dir))
    bench = spec.get("benchmark", {})
    params = {
        "benchmark": str(bench.get("spec", "")), "split": str(bench.get("split", "")),
        "n_items": str(bench.get("n_items", "")), "content_hash": str(bench.get("content_hash", "")),
        "model": str(spec.get("model", "")), "prompt": str(spec.get("prompt", "")),
        "extract": str(spec.get("extract", "")), "probe": str(spec.get("probe")),
        "seed": str(spec.get("seed", "")),
    }  # fmt: skip
    key = f"{run.get('spec_hash', '')[:24]}-{re.sub(r'[^0-9]', '', str(run.get('created', '')))}"
    tags = {"medlens.run_key": key, "medlens.run_dir": str(Path(run_dir).resolve()),
            "medlens.version": str(run.get("medlens_version", ""))}  # fmt: skip
    source = run.get("benchmark_source") or {}
    if source.get("repo"):
        tags.update({"hf.repo": str(source["repo"]), "hf.commit": str(source.get("commit"))})
    html = str(render(run_dir, "html", parse_score_source("rules")))
    card = protocol_text(run_dir)
    return Payload(key, Path(run_dir).name, params, tags, metrics, html, card)


def score_metrics(report: dict[str, Any], prefix: str) -> dict[str, float]:
    """Overall and per-axis score, interval, n and chance level as flat metric names."""
    out = cell_metrics(report.get("overall") or {}, f"{prefix}overall")
    for name, rate in (report.get("rates") or {}).items():
        if isinstance(rate, (int, float)):
            out[f"{prefix}rate.{name}"] = float(rate)
    for axis, cells in (report.get("by") or {}).items():
        for value, cell in list(cells.items())[:AXES_LOGGED]:
            out.update(cell_metrics(cell, f"{prefix}by.{_safe(axis)}.{_safe(value)}"))
    return out


def cell_metrics(cell: dict[str, Any], name: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for key in ("score", "n", "random"):
        if isinstance(cell.get(key), (int, float)):
            out[f"{name}.{key}"] = float(cell[key])
    ci = cell.get("ci")
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci):
        out[f"{name}.ci_low"], out[f"{name}.ci_high"] = float(ci[0]), float(ci[1])
    return out


def token_metrics(run_dir: Path) -> dict[str, float]:
    """Prompt and completion tokens the records report (the cost, before a price)."""
    from medlens.runs.view import RunView

    totals = {"tokens.prompt": 0.0, "tokens.completion": 0.0}
    for record in RunView(run_dir).records().values():
        usage = record.get("usage") or {}
        totals["tokens.prompt"] += float(
            usage.get("prompt_tokens") or usage.get("input_tokens") or 0
        )
        totals["tokens.completion"] += float(
            usage.get("completion_tokens") or usage.get("output_tokens") or 0
        )
    return totals


def _safe(text: str) -> str:
    """A metric-name-safe form (MLflow allows letters, digits, _ - . space and /)."""
    return re.sub(r"[^\w\-. /]", "_", str(text))[:80] or "_"


def protocol_text(run_dir: Path) -> str:
    """The protocol card as text: its marker, rows and prompt templates."""
    from medlens.report.card import protocol_card

    card = protocol_card(Path(run_dir))
    lines = [card.marker, "", *(f"{name}: {value}" for name, value in card.rows)]
    for kind, template in card.templates:
        lines += ["", f"prompt template ({kind}):", template]
    return "\n".join(lines) + "\n"
