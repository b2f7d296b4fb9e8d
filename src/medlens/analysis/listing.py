"""The daily look at runs: `medlens runs` (one line per run) and `medlens show` (one item).

Both only read: results.json is used when it is at least as new as records.jsonl, otherwise the
summary is derived afresh (never written back).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.runs.finding import runs_below
from medlens.runs.view import RunView


@dataclass(frozen=True)
class RunSummary:
    name: str
    benchmark: str
    """The benchmark spec the run recorded, in full."""
    benchmark_label: str
    """``loader:file-name`` (no folders), for a table that stays readable."""
    selection: str
    """The run's own selection or subset recipe in one line, or ``all items``."""
    model: str
    done: int
    total: int
    n: int
    """Scored items behind `score` and `ci`."""
    score: float | None
    ci: tuple[float, float] | None
    errors: int
    created: str
    writer: str | None
    """The live process writing the run, if any."""

    def to_json(self) -> dict[str, Any]:
        return {**self.__dict__, "ci": list(self.ci) if self.ci else None}


def list_runs(folder: Path) -> list[RunSummary]:
    """Every run directory below `folder` (a study's runs too, as `view` finds them), named by
    its path inside `folder`."""
    if not folder.is_dir():
        raise MedlensError(f"{folder}: no such folder of runs")
    return [
        dataclasses.replace(summarise_run(run), name=run.relative_to(folder).as_posix())
        for run in runs_below(folder)
    ]


def _results(store: RunView) -> dict[str, Any]:
    """The run's results, from results.json while fresh (``analysis.artifacts``)."""
    from medlens.analysis.artifacts import fresh_results

    return fresh_results(store)


def summarise_run(run_dir: Path) -> RunSummary:
    from medlens.runs.lock import lock_holder

    store = RunView(run_dir)
    results = _results(store)
    spec, counts, overall = store.run["spec"], results["counts"], results["overall"]
    ci = overall.get("ci")
    return RunSummary(
        name=run_dir.name,
        benchmark=str(spec["benchmark"].get("spec", "")),
        benchmark_label=benchmark_label(str(spec["benchmark"].get("spec", ""))),
        selection=selection_text(spec),
        model=str(spec.get("model", "")),
        done=int(counts["records"]) - int(counts["errors"]),
        total=int(counts["items"]),
        n=int(overall.get("n") or 0),
        score=overall.get("score"),
        ci=(float(ci[0]), float(ci[1])) if ci else None,
        errors=int(counts["errors"]),
        created=str(store.run.get("created", "")),
        writer=lock_holder(run_dir),
    )


def benchmark_label(spec_text: str) -> str:
    """``gmai:/data/x/GMAI_VAL.tsv?split=val`` → ``gmai:GMAI_VAL.tsv?split=val``."""
    from medlens.core.errors import SpecError
    from medlens.runs.recorded import stored_spec

    try:
        spec = stored_spec(spec_text)
    except SpecError:
        return spec_text
    if not spec.argument:
        return spec.name
    options = "&".join(f"{k}={v}" for k, v in spec.options.items())
    name = Path(spec.argument.rstrip("/")).name or spec.argument
    return f"{spec.name}:{name}" + (f"?{options}" if options else "")


def selection_text(spec: dict[str, Any]) -> str:
    """``5 of 12 items: sample 5, seed 0``; a frozen subset's recipe; else ``all items``."""
    from medlens.execution.selection import recipe_text

    for key in ("selection", "subset"):
        entry = spec.get(key)
        if entry:
            source = entry.get("source", {})
            return f"{entry.get('n_items')} of {source.get('n_items')} items: " + recipe_text(
                _file_names(entry.get("recipe", {}))
            )
    return "all items"


def _file_names(recipe: dict[str, Any]) -> dict[str, Any]:
    """The recipe with its id-list and audit files named by file name (folders left out)."""
    short = dict(recipe)
    for key in ("include", "exclude", "drop_flagged"):
        if isinstance(short.get(key), dict) and short[key].get("path"):
            short[key] = {**short[key], "path": Path(str(short[key]["path"])).name}
    return short


def show_item(run_dir: Path, item_id: str) -> dict[str, Any]:
    """Everything medlens knows about one item of a run: the item, the exact prompt sent, the
    record (raw output, extraction, scores, error, retries) and any judge verdicts."""
    from medlens.execution.dry_run import conversation_text, describe_image

    store = RunView(run_dir)
    items = {item.id: item for item in store.items()}
    item = items.get(item_id)
    if item is None:
        sample = ", ".join(list(items)[:5])
        raise MedlensError(f"{run_dir}: no item with id {item_id!r} (ids look like: {sample})")
    record = store.records().get(item.id)
    cut = cut_of(item, record, str(store.run["spec"].get("extract") or "medlens"))
    shown = {
        "id": item.id,
        "kind": item.kind,
        "question": item.question,
        "context": item.context,
        "options": dict(item.options),
        "gold": item.answer,
        "images": [describe_image(image) for image in item.images],
        "system": _system_prompt(str(store.run["spec"].get("model", ""))),
        "prompt": conversation_text(item, settings_of_run(store.run["spec"])),
        "meta": dict(item.meta),
        "record": record,
        "judgements": judge_verdicts(run_dir, item.id),
    }
    return {**shown, "cut": cut} if cut else shown  # only for a cut output (issue 42)


def cut_of(item: Item, record: dict[str, Any] | None, mode: str) -> dict[str, str] | None:
    """For an output medlens read as cut (at the token cap, or visibly): the part it read and
    the part it dropped (``extract.cut``); None otherwise."""
    from medlens.extract import cut_reading

    if record is None or mode != "medlens" or record.get("error"):
        return None
    parts = cut_reading(item, record.get("output"), record.get("finish_reason"))
    return None if parts is None else {"read": parts[0], "dropped": parts[1]}


def settings_of_run(spec: dict[str, Any]) -> Any:
    """The prompt style and strategy a run's requests were built with (exemplars re-read)."""
    from medlens.execution.exemplars import exemplars_of_run
    from medlens.execution.prompt_files import template_of_spec
    from medlens.execution.requests import RunSettings
    from medlens.execution.strategies import recorded_strategy

    recorded = spec.get("prompt_template")
    return RunSettings(
        prompt=str(spec.get("prompt", "medlens")),
        strategy=recorded_strategy(spec),
        exemplars=exemplars_of_run(spec.get("strategy") or {}),
        template=template_of_spec(recorded) if recorded else None,
    )


def _system_prompt(model_spec: str) -> str | None:
    """The system message a model spec sends (openai's ``system=`` option), if any."""
    from medlens.core.errors import SpecError
    from medlens.runs.recorded import stored_spec

    try:
        return stored_spec(model_spec).option("system") or None
    except SpecError:
        return None


def judge_verdicts(run_dir: Path, item_id: str) -> dict[str, list[dict[str, Any]]]:
    """Judge name → its judgement lines for the item (``runs.judgements.item_lines``)."""
    from medlens.runs.judgements import item_lines

    return item_lines(run_dir, item_id)
