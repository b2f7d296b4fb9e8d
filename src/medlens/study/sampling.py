"""Sampled models of a study (``sample = N``): the bank from the full runs, one shared design
subset per benchmark, and the sampled runs' previews on it (issue 31).

Once the study's full runs have finished, for each benchmark with sampled runs to make:

1. the item bank (``medlens items fit``) is fitted on the benchmark's finished full runs when
   there are at least 5, and written to ``<study>/items/<benchmark>/bank.json`` beside
   ``bank-runs.json`` (each run's records.jsonl hash); a rerun whose full runs did not change
   reuses it, and one with a new or grown full run refits it;
2. the design subset (``medlens items sample`` with its default unit, single items: strata by the
   benchmark's ``stratify`` axes and the bank's predicted difficulty, inclusion probabilities
   recorded in ``subset.json``, seeded with the study's seed) is drawn once, to ``<study>/items/<benchmark>/subset.jsonl`` (``.tsv``
   for a TSV source), and kept: every sampled model of the study, now or added later, answers
   those items (a subset drawn before item units existed keeps its images as units: its
   ``subset.json`` records no ``unit``, and the estimate reads it as a design of images). A
   refitted bank does not redraw it; the estimate then uses the new bank (any
   bank fitted without the sampled runs keeps the AIPW estimate design-unbiased);
3. the sampled runs are previewed on the subset as ``run --dry-run`` would, and run.

Each sampled run records the design (``spec.subset.design``, naming the bank), so its report,
``medlens estimate`` and the study's boards (rows "estimated from N items") read it as they read
any run on a designed subset.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError
from medlens.core.fingerprint import item_axes
from medlens.core.specs import Spec
from medlens.core.where import check_axes
from medlens.execution.dry_run import plan_run
from medlens.execution.preparation import LoadedBenchmark, load_items
from medlens.execution.selection import parse_stratify
from medlens.items.estimate import design_unit
from medlens.items.responses import MIN_RUNS
from medlens.items.sample import smallest_n
from medlens.runs.files import write_atomic
from medlens.runs.layout import has_results
from medlens.study.jobs import FINISHED_STATES, JobResult
from medlens.study.plan import RunJob, StudyPlan
from medlens.study.preview import RunPreview

BANK = "bank.json"
BANK_RUNS = "bank-runs.json"


@dataclass(frozen=True)
class SharedSubset:
    """One benchmark's sampled runs and where their bank and subset live."""

    benchmark: str
    n: int
    subset: Path
    full: list[RunJob]
    sampled: list[RunJob]
    """The sampled runs this invocation makes (``--only``)."""

    @property
    def folder(self) -> Path:
        return self.subset.parent


@dataclass
class SamplingOutcome:
    loaded: dict[str, LoadedBenchmark]
    """Benchmark label → its subset, for the benchmarks whose sampled runs can run."""
    held: dict[str, JobResult]
    """Sampled run key → why it cannot run now (waiting for full runs, a failed fit or draw)."""
    record: dict[str, dict[str, Any]]
    """Benchmark label → study.json's ``sampling`` entry."""


def shared_subsets(plan: StudyPlan) -> list[SharedSubset]:
    """Per benchmark with sampled runs selected, its full and sampled runs (plan order)."""
    out = []
    for label in plan.study.benchmarks:
        sampled = [job for job in plan.selected_runs if job.benchmark == label and job.sample]
        if not sampled:
            continue
        full = [job for job in plan.runs.values() if job.benchmark == label and job.full]
        out.append(SharedSubset(label, sampled[0].sample or 0,
                                Path(sampled[0].options.bench.argument), full, sampled))  # fmt: skip
    return out


def check_sample_sizes(plan: StudyPlan, loaded: Mapping[str, LoadedBenchmark]) -> None:
    """N below each benchmark's item count and enough for its design, the design's axes among
    the benchmark's; refused naming the study file, the line and the key, before anything is
    written."""
    study = plan.study
    for shared in shared_subsets(plan):
        benchmark, items = loaded[shared.benchmark]
        model = study.models[shared.sampled[0].model]
        where = f"line {model.line}, key models.{model.label}.sample"
        if shared.n >= len(items):
            raise InputError(study.path, where,
                             f"{shared.n}: not fewer than the {len(items)} items of benchmark "
                             f"{shared.benchmark!r}; a sample must leave items out (or run the "
                             "model on every item: drop sample)")  # fmt: skip
        entry = study.benchmarks[shared.benchmark]
        axes = _design_axes(plan, entry.label, (benchmark, items))
        fewest = smallest_n(items, axes)
        if shared.n < fewest:
            raise InputError(study.path, where,
                             f"{shared.n}: too few items for the design on benchmark "
                             f"{shared.benchmark!r} (2 items per stratum of "
                             f"{entry.stratify or 'the benchmark'}): at least {fewest}")  # fmt: skip


def _design_axes(plan: StudyPlan, label: str, loaded: LoadedBenchmark) -> tuple[str, ...]:
    """The benchmark's ``stratify`` axes, checked against its items' axes."""
    entry, (_, items) = plan.study.benchmarks[label], loaded
    axes = parse_stratify(entry.stratify)
    try:
        check_axes(axes, (*item_axes(items), "kind"), "stratify")
    except MedlensError as exc:
        raise InputError(plan.study.path, f"line {entry.line}, key benchmarks.{label}.stratify",
                         str(exc)) from None  # fmt: skip
    return axes


def draw_shared_subsets(
    plan: StudyPlan, states: Mapping[str, Mapping[str, Any]], note: Callable[[str], None]
) -> SamplingOutcome:
    """Banks and subsets for every benchmark whose full runs allow them (module docstring)."""
    outcome = SamplingOutcome({}, {}, {})
    for shared in shared_subsets(plan):
        finished = [j for j in shared.full if states.get(j.key, {}).get("state") in FINISHED_STATES]
        if len(finished) < MIN_RUNS:
            why = (f"waiting for the item bank of {shared.benchmark}: {len(finished)} of its "
                   f"full runs finished, it needs {MIN_RUNS}; rerun the study once they have")  # fmt: skip
            _hold(outcome, shared, JobResult("pending", message=why), note)
            continue
        try:
            refit = ensure_bank(shared, finished)
            drawn = ensure_subset(plan, shared)
            outcome.loaded[shared.benchmark] = load_items(_spec_of(shared))
        except MedlensError as exc:
            why = f"no design subset of {shared.benchmark} ({shared.n} items): {exc}"
            _hold(outcome, shared, JobResult("failed", message=why), note)
            continue
        outcome.record[shared.benchmark] = _record_entry(plan, shared, finished, refit, drawn)
    return outcome


def _hold(
    outcome: SamplingOutcome, shared: SharedSubset, result: JobResult,
    note: Callable[[str], None],
) -> None:  # fmt: skip
    note(f"{', '.join(job.key for job in shared.sampled)}: {result.message}")
    for job in shared.sampled:
        outcome.held[job.key] = result


def _spec_of(shared: SharedSubset) -> Spec:
    return shared.sampled[0].options.bench


def runs_fingerprint(runs: list[RunJob]) -> dict[str, str]:
    """Run key → sha256 of its records.jsonl: what the bank was fitted on."""
    from medlens.runs.view import RunView

    return {job.key: RunView(job.options.out / job.key).records_sha256() for job in runs}


def ensure_bank(shared: SharedSubset, finished: list[RunJob]) -> bool:
    """Fit the bank unless the one on disk was fitted on exactly these runs; True: (re)fitted."""
    from medlens.items.bank import fit_bank

    fingerprint = runs_fingerprint(finished)
    bank, inputs = shared.folder / BANK, shared.folder / BANK_RUNS
    if bank.is_file() and inputs.is_file() and _fitted_on(inputs) == fingerprint:
        return False
    content = fit_bank([job.options.out / job.key for job in finished])
    shared.folder.mkdir(parents=True, exist_ok=True)
    write_atomic(bank, json.dumps(content, ensure_ascii=False, indent=1) + "\n")
    write_atomic(inputs, json.dumps({"runs": fingerprint}, indent=1) + "\n")
    return True


def _fitted_on(inputs: Path) -> Any:
    try:
        return json.loads(inputs.read_text(encoding="utf-8")).get("runs")
    except (OSError, ValueError, AttributeError):
        return None  # unreadable: refit


def ensure_subset(plan: StudyPlan, shared: SharedSubset) -> bool:
    """Draw the subset unless it exists (with its subset.json); True: drawn now."""
    from medlens.items.sample import sample_subset

    if shared.subset.is_file() and (shared.folder / "subset.json").is_file():
        return False
    entry = plan.study.benchmarks[shared.benchmark]
    sample_subset(entry.spec, shared.folder / BANK, shared.n, shared.subset, plan.study.seed,
                  parse_stratify(entry.stratify))  # fmt: skip
    return True


def _record_entry(
    plan: StudyPlan, shared: SharedSubset, finished: list[RunJob], refit: bool, drawn: bool
) -> dict[str, Any]:
    sidecar = json.loads((shared.folder / "subset.json").read_text(encoding="utf-8"))
    return {
        "n": shared.n,
        "items": sidecar.get("n_items"),
        "unit": design_unit(sidecar.get("design") or {}),
        "bank": str((shared.folder / BANK).relative_to(plan.folder)),
        "subset": str(shared.subset.relative_to(plan.folder)),
        "full_runs": [job.key for job in finished],
        "bank_fitted": refit,
        "subset_drawn": drawn,
        "sampled_runs": [job.key for job in shared.sampled],
    }


def sampled_previews(
    plan: StudyPlan, loaded: Mapping[str, LoadedBenchmark]
) -> dict[str, RunPreview]:
    """Each sampled run that can run, checked on its subset as ``run --dry-run`` checks it."""
    from medlens.study.preview import located

    previews = {}
    for shared in shared_subsets(plan):
        if shared.benchmark not in loaded:
            continue
        for job in shared.sampled:
            model = plan.study.models[job.model]
            checked = located(plan.study, model.line, f"models.{job.model}",
                              partial(plan_run, job.options, loaded[job.benchmark]),
                              run=job.key)  # fmt: skip
            complete = not checked.todo and has_results(checked.run_dir)
            previews[job.key] = RunPreview(job.key, checked.selected, checked.todo,
                                           checked.settings, checked.model_spec, complete,
                                           checked.notes, checked.spec)  # fmt: skip
    return previews


def plan_lines(plan: StudyPlan) -> list[str]:
    """The sampling steps of the plan, one line per benchmark (``study --dry-run``)."""
    lines = []
    for shared in shared_subsets(plan):
        axes = plan.study.benchmarks[shared.benchmark].stratify
        strata = "predicted difficulty" + (f" × {axes}" if axes else "")
        drawn = shared.subset.is_file()
        lines.append(
            f"sampling {shared.benchmark}: {len(shared.full)} full runs → item bank "
            f"{shared.folder / BANK} (refitted only when the full runs change) → "
            + (f"design subset {shared.subset} (drawn before: kept)" if drawn else
               f"design subset of {shared.n} items (single items drawn; strata: {strata}; seed "
               f"{plan.study.seed}) → {shared.subset}")
            + f" → {len(shared.sampled)} sampled run{'s' if len(shared.sampled) > 1 else ''} "
            f"({', '.join(j.key for j in shared.sampled)})"
            f", shown on the boards as estimates with intervals"
        )  # fmt: skip
    return lines
