"""``medlens export RUN|BOARD --format every-eval-ever``: runs in the Every Eval Ever schema.

Every Eval Ever (EvalEval Coalition) stores one aggregate log per model
(``data/<collection>/<developer>/<model>/<uuid>.json``) and its per-sample lines beside it
(``<uuid>_samples.jsonl``). A run is one model on one benchmark; a board (several runs, or a
folder of runs) gives one log per model with one group of results per run. Each file is checked
against the vendored published schema (``schemas/every_eval_ever``, version
:data:`SCHEMA_VERSION`) with ``jsonschema`` before anything is written.

Where medlens's numbers go: the run's score → ``score_details.score``; its 95% interval (the
single-sourced method of ``docs/statistics.md``, named per cell) → ``uncertainty.
confidence_interval`` with ``num_samples`` = n; n, images, chance level, chance-corrected score,
the VLMEvalKit-rules score and the unparsed/refused/empty/error rates → ``score_details.details``;
the unparsed, refused and error rates are also results of their own (lower is better). The
benchmark's provenance (Hub repo and commit, or the loader card's homepage; spec, content hash,
licence, citation) → ``source_data``; the medlens version, commit, spec hash and records digest
→ ``eval_library``; what was sent (temperature, max tokens, seed …) → ``generation_config``; a
judged score source → ``metric_config.llm_scoring``. Rank intervals of a board have no field in
the schema and are not exported.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from medlens.core.errors import MedlensError, SpecError
from medlens.report.eee_model import judge_configs, judge_prompt, model_id, model_info, path_parts
from medlens.report.eee_samples import sample_lines
from medlens.report.eee_sources import generation_config, source_data
from medlens.report.export_file import ExportFile

if TYPE_CHECKING:
    from medlens.analysis.score_source import ScoreSource
    from medlens.runs.view import RunView

SCHEMA_VERSION = "0.3.0"
SCHEMA_DIR = Path(__file__).parent / "schemas" / "every_eval_ever"
CONFIDENCE = 0.95
RELATIONSHIPS = ("first_party", "third_party", "collaborative", "other")
RATES = ("unparsed", "refused", "error")


@dataclass(frozen=True)
class EeeSettings:
    """What the user tells the export beyond the runs."""

    score: ScoreSource | None = None
    """``--score``: rules (None), ``judge:NAME`` or ``combined:NAME``."""
    organization: str = "unspecified"
    """``source_metadata.source_organization_name``: who provides the data."""
    relationship: str = "third_party"
    """Of the evaluator to the model's developer."""
    model_id: str | None = None
    collection: str | None = None
    by: tuple[str, ...] = ()
    """Axes whose values become results of their own (``--by task,department``)."""
    retrieved: str | None = field(default=None, compare=False)
    """When the record is made (epoch seconds); None: now."""


def export_eee(paths: Sequence[Path], settings: EeeSettings) -> list[ExportFile]:
    """The files of the export: one log and its samples per model among the runs."""
    from medlens.runs.view import RunView

    if settings.relationship not in RELATIONSHIPS:
        raise SpecError(
            f"--relationship {settings.relationship!r}: one of {', '.join(RELATIONSHIPS)}"
        )
    views = [RunView(path) for path in expand_runs(paths)]
    if settings.model_id and len({v.spec["model"] for v in views}) > 1:
        raise SpecError("--model-id names one model; these runs are of several models")
    groups: dict[str, list[RunView]] = {}
    for view in views:
        groups.setdefault(model_id(view.spec["model"], settings.model_id), []).append(view)
    collection = _portable(settings.collection or _collection(views))
    files = [
        f for ident, group in groups.items() for f in _log_files(ident, group, collection, settings)
    ]
    validate_files(files)
    return files


def expand_runs(paths: Sequence[Path]) -> list[Path]:
    """Runs as given, and every run directly inside a folder that is not one (a board's runs)."""
    from medlens.runs.layout import is_run

    found: list[Path] = []
    for path in paths:
        if is_run(path):
            found.append(path)
        elif path.is_dir() and (inside := sorted(p for p in path.iterdir() if is_run(p))):
            found.extend(inside)
        else:
            raise MedlensError(f"{path}: not a run directory, nor a folder holding runs")
    return found


def _collection(views: Sequence[RunView]) -> str:
    names = {v.spec["benchmark"]["name"] for v in views}
    return names.pop() if len(names) == 1 else "medlens"


def _portable(name: str) -> str:
    return (
        "".join(ch if ch.isalnum() or ch in "-_." else "-" for ch in name).strip(".-") or "medlens"
    )


def _log_files(
    ident: str, views: list[RunView], collection: str, settings: EeeSettings
) -> list[ExportFile]:
    developer, model = path_parts(ident)
    started = min(_epoch(v.run.get("created")) for v in views)
    evaluation_id = f"{collection}/{developer}_{model}/{started}"
    identity = "\n".join(
        [evaluation_id, *(f"{v.run.get('spec_hash')}:{v.records_sha256()}" for v in views)]
    )
    file_uuid = str(uuid.UUID(bytes=hashlib.sha256(identity.encode()).digest()[:16], version=4))
    folder = f"data/{collection}/{developer}/{model}"
    results: list[dict[str, Any]] = []
    lines: list[dict[str, Any]] = []
    for view in views:
        run_results, items, records = _run_results(view, settings)
        results.extend(run_results)
        link = {"schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id, "model_id": ident,
                "evaluation_name": run_results[0]["evaluation_name"],
                "evaluation_result_id": run_results[0]["evaluation_result_id"]}  # fmt: skip
        lines.extend(sample_lines(items, records, link))
    samples = "".join(
        json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in lines
    ).encode()
    log = {
        "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id,
        "evaluation_timestamp": str(started),
        "retrieved_timestamp": settings.retrieved or str(int(time.time())),
        "source_metadata": {"source_name": "medlens", "source_type": "evaluation_run",
                            "source_organization_name": settings.organization,
                            "evaluator_relationship": settings.relationship,
                            "additional_details": {"runs": ", ".join(v.name for v in views)}},
        "eval_library": _library(views),
        "model_info": model_info(views[0].spec["model"], views[0].run, settings.model_id),
        "evaluation_results": results,
        "detailed_evaluation_results": {
            "format": "jsonl", "file_path": f"{folder}/{file_uuid}_samples.jsonl",
            "hash_algorithm": "sha256", "checksum": hashlib.sha256(samples).hexdigest(),
            "total_rows": len(lines)},
    }  # fmt: skip
    text = json.dumps(log, ensure_ascii=False, indent=2, allow_nan=False) + "\n"
    return [ExportFile(f"{folder}/{file_uuid}.json", text.encode()),
            ExportFile(f"{folder}/{file_uuid}_samples.jsonl", samples)]  # fmt: skip


def _epoch(created: object) -> int:
    try:
        return int(datetime.fromisoformat(str(created)).timestamp())
    except ValueError:
        return 0


def _library(views: list[RunView]) -> dict[str, Any]:
    run = views[0].run
    details = {
        "medlens_commit": str((run.get("environment") or {}).get("medlens_commit") or "unknown")
    }
    for view in views:
        details[f"run {view.name}"] = (f"spec_hash {view.run.get('spec_hash')}; "
                                       f"records sha256 {view.records_sha256()}")  # fmt: skip
    return {"name": "medlens", "version": str(run.get("medlens_version") or "unknown"),
            "additional_details": details}  # fmt: skip


def _run_results(
    view: RunView, settings: EeeSettings
) -> tuple[list[dict[str, Any]], list[Any], dict[str, Any]]:
    """One run's results (main score, the rates, the asked axes) and its items and records as
    scored under the score source."""
    from medlens.analysis.artifacts import fresh_results

    source = settings.score
    results = fresh_results(view, score_source=source.label if source else "rules", note=None)
    items, records = view.items(), view.records()
    if source is not None and source.judged:
        from medlens.analysis.score_source import sourced_run

        sourced = sourced_run(view.path, items, records, source)
        items, records = sourced.items, sourced.records
    binary = all(r.get("score") in (None, 0, 0.0, 1, 1.0) for r in records.values())
    base = _base(view, settings, binary)
    out = [_result(base, f"{view.name}:score", base["name"], results["overall"], binary, view)]
    for rate in RATES:
        out.append(_rate_result(base, view, results["overall"], rate))
    for axis in settings.by:
        cells = (results.get("by") or {}).get(axis)
        if cells is None:
            raise SpecError(f"--by {axis}: run {view.name} has no axis {axis!r} "
                            f"(axes: {', '.join(sorted(results.get('by') or {}))})")  # fmt: skip
        for value, cell in cells.items():
            name = f"{base['name']}.{axis}={value}"
            out.append(_result(base, f"{view.name}:{axis}={value}", name, cell, binary, view))
    return out, items, records


def _base(view: RunView, settings: EeeSettings, binary: bool) -> dict[str, Any]:
    bench = view.spec["benchmark"]
    metric = {"metric_id": "accuracy", "metric_name": "Accuracy", "metric_kind": "accuracy"} if binary else {
        "metric_id": "medlens.mean_item_score", "metric_name": "Mean item score", "metric_kind": "mean_score"}  # fmt: skip
    config: dict[str, Any] = {"evaluation_description": str(bench.get("description") or bench["name"]),
                              **metric, "metric_unit": "proportion", "lower_is_better": False,
                              "score_type": "continuous", "min_score": 0.0, "max_score": 1.0,
                              "additional_details": {"score_source": settings.score.label if settings.score else "rules",
                                                     "unparsed_and_refused": "scored 0 (wrong)",
                                                     "errored_items": "left out of the score; see error rate"}}  # fmt: skip
    if settings.score is not None and settings.score.judged:
        stage = view.judge(str(settings.score.judge))
        config["llm_scoring"] = {
            "judges": judge_configs(stage),
            "input_prompt": judge_prompt(stage),
        }
    return {"name": f"{bench['name']}.{bench.get('split', '')}".rstrip("."),
            "source_data": source_data(view), "metric_config": config,
            "generation_config": generation_config(view)}  # fmt: skip


def _result(base: dict[str, Any], result_id: str, name: str, cell: dict[str, Any], binary: bool,
            view: RunView) -> dict[str, Any]:  # fmt: skip
    if cell.get("score") is None:
        raise MedlensError(f"{view.path}: no scored item in {name} yet: nothing to export")
    score: dict[str, Any] = {"score": float(cell["score"]), "details": _details(cell)}
    if cell.get("ci"):
        lower, upper = (float(v) for v in cell["ci"])
        score["uncertainty"] = {
            "confidence_interval": {"lower": lower, "upper": upper, "confidence_level": CONFIDENCE,
                                    "method": interval_method(cell, binary)},
            "num_samples": int(cell["n"]),
        }  # fmt: skip
    return {"evaluation_result_id": result_id, "evaluation_name": name,
            "source_data": base["source_data"], "metric_config": base["metric_config"],
            "score_details": score, "generation_config": base["generation_config"]}  # fmt: skip


def _rate_result(
    base: dict[str, Any], view: RunView, overall: dict[str, Any], rate: str
) -> dict[str, Any]:
    config = {"evaluation_description": f"share of items whose answer was {rate}"
              + (" (request failed)" if rate == "error" else " (counted wrong)"),
              "metric_id": f"medlens.{rate}_rate", "metric_name": f"{rate.capitalize()} rate",
              "metric_kind": "rate", "metric_unit": "proportion", "lower_is_better": True,
              "score_type": "continuous", "min_score": 0.0, "max_score": 1.0}  # fmt: skip
    return {"evaluation_result_id": f"{view.name}:{rate}_rate", "evaluation_name": f"{base['name']}.{rate}_rate",
            "source_data": base["source_data"], "metric_config": config,
            "score_details": {"score": float(overall.get(rate) or 0.0)}}  # fmt: skip


def _details(cell: dict[str, Any]) -> dict[str, str]:
    keys = ("n", "images", "effective_images", "random", "chance_corrected", "p_above_chance",
            "small", "vlmeval_score", "sensitivity", "unparsed", "refused", "empty", "error",
            "truncated")  # fmt: skip
    names = {"random": "chance_level", "vlmeval_score": "vlmeval_rules_score",
             "sensitivity": "extraction_sensitivity", "small": "small_cell",
             **{r: f"{r}_rate" for r in ("unparsed", "refused", "empty", "error", "truncated")}}  # fmt: skip
    return {names.get(k, k): _text(cell[k]) for k in keys if cell.get(k) is not None}


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def interval_method(cell: dict[str, Any], binary: bool) -> str:
    """The name of the interval medlens computed for this cell (``docs/statistics.md``)."""
    n, images = int(cell.get("n") or 0), int(cell.get("images") or 0)
    item = "Wilson score interval" if binary else "bounded-mean interval of non-0/1 scores"
    if images >= n or images < 2:
        return f"{item} (items independent)"
    return (
        f"widest of the {item}, the cluster-robust t interval with {images} images "
        f"(effective {cell.get('effective_images')}; df = effective − 1) and the "
        "Korn–Graubard effective-n interval (questions sharing an image are clustered)"
    )


def validate_files(files: Sequence[ExportFile]) -> None:
    """Every file against the vendored schema; MedlensError naming the file, the line and the
    place of the first violation (nothing is written then)."""
    aggregate, instance = (
        _validator("eval.schema.json"),
        _validator("instance_level_eval.schema.json"),
    )
    for file in files:
        if file.name.endswith("_samples.jsonl"):
            for number, line in enumerate(file.content.decode().splitlines(), start=1):
                _check(instance, json.loads(line), f"{file.name}, line {number}")
        else:
            _check(aggregate, json.loads(file.content), file.name)


def _validator(name: str) -> Any:
    from jsonschema import Draft7Validator

    return Draft7Validator(json.loads((SCHEMA_DIR / name).read_text(encoding="utf-8")))


def _check(validator: Any, value: Any, where: str) -> None:
    for error in _errors(validator, value):
        place = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise MedlensError(f"{where}: {place}: {error.message} (Every Eval Ever schema "
                           f"{SCHEMA_VERSION}); this is a medlens bug, please report it")  # fmt: skip


def _errors(validator: Any, value: Any) -> Iterator[Any]:
    yield from sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
