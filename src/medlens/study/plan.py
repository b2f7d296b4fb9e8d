"""A study's plan: one ordinary run per model × benchmark, judge stages, and the lanes they use.

Runs live in ``<out>/<study>/runs/<model>--<benchmark>/`` and are made with the same
:class:`RunOptions` that ``medlens run`` builds, so every other command works on them. A lane is
one endpoint (an OpenAI-compatible server's ``base_url``; for an in-process backend, its spec):
jobs on one lane take turns, each with that endpoint's concurrency, so a server never sees more
than one run's (or judge's) requests at once; jobs on different lanes run at the same time.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from medlens.core.errors import SpecError
from medlens.core.specs import Spec
from medlens.execution.evaluate import RunOptions
from medlens.judges.options import JudgeOptions
from medlens.sources.sidecar import TSV_LOADERS
from medlens.study.entries import AdaptiveEntry, Study

DEFAULT_CONCURRENCY = 8
RUN_SEPARATOR = "--"
ITEMS_FOLDER = "items"
"""Under the study folder: per benchmark with sampled models, its bank and design subset."""


@dataclass(frozen=True)
class StudySettings:
    """What `medlens study` was asked, beyond the file."""

    out: Path = Path("studies")
    only: tuple[str, ...] = ()
    """Model labels to run (empty: all); boards still show every finished run."""
    concurrency: int | None = None
    """Default requests in flight per endpoint (a model's own `concurrency` wins)."""
    executor: str = "local"
    ray_address: str | None = None
    cache: bool = True
    order: str = "image"
    budget: float | None = None
    """USD; None: the file's `budget`, if any."""
    max_error_rate: float = 0.0
    reports: bool = True
    """Write each finished run's report.html at the end (matplotlib: ~2 s a run)."""


@dataclass(frozen=True)
class RunJob:
    key: str
    """The run's folder name, ``<model>--<benchmark>``."""
    model: str
    benchmark: str
    options: RunOptions
    lane: str
    sample: int | None = None
    """The model's ``sample = N``: the run answers the study's shared design subset of the
    benchmark (``options.bench``, drawn after the full runs: :mod:`medlens.study.sampling`)."""
    adaptive: AdaptiveEntry | None = None
    """The model's ``adaptive`` table: an adaptive run, made after the full runs
    (:mod:`medlens.study.adaptive_runs`)."""
    kind: str = field(default="run", init=False)

    @property
    def full(self) -> bool:
        """The run asks every item (neither sampled nor adaptive)."""
        return self.sample is None and self.adaptive is None


@dataclass(frozen=True)
class JudgeJob:
    key: str
    """``<run>/<judge>``."""
    run: str
    judge: str
    options: JudgeOptions
    lane: str
    kind: str = field(default="judge", init=False)


Job = RunJob | JudgeJob


@dataclass(frozen=True)
class StudyPlan:
    study: Study
    settings: StudySettings
    folder: Path
    runs: dict[str, RunJob]
    """Every run of the study, in file order (models outer, benchmarks inner)."""
    judges: dict[str, list[JudgeJob]]
    """Judge stages by run key."""

    @property
    def selected_runs(self) -> list[RunJob]:
        """The runs this invocation makes (`--only`)."""
        only = self.settings.only
        return [job for job in self.runs.values() if not only or job.model in only]

    def only_runs(self, sampled: bool) -> StudyPlan:
        """The plan with only its sampled runs (`sampled`) or only its full runs."""
        kept = {k: job for k, job in self.runs.items()
                if (job.sample is not None if sampled else job.full)}  # fmt: skip
        return replace(self, runs=kept)

    def adaptive_runs(self) -> StudyPlan:
        """The plan with only its adaptive runs."""
        return replace(self, runs={k: j for k, j in self.runs.items() if j.adaptive is not None})

    @property
    def budget(self) -> float | None:
        return self.settings.budget if self.settings.budget is not None else self.study.budget


def endpoint(spec: Spec) -> str:
    """The lane of a backend: where its requests go."""
    if spec.name == "openai":
        return "openai " + (spec.option("base_url") or "https://api.openai.com/v1").rstrip("/")
    return spec.canonical()


def run_key(model: str, benchmark: str) -> str:
    return f"{model}{RUN_SEPARATOR}{benchmark}"


def subset_spec(folder: Path, benchmark: str, source: Spec) -> Spec:
    """Where the study keeps a benchmark's shared design subset, as the spec its sampled runs
    read: ``<study>/items/<benchmark>/subset.tsv`` for a TSV source (rows copied byte for byte),
    else ``subset.jsonl``."""
    tsv = source.name in TSV_LOADERS
    path = folder / ITEMS_FOLDER / benchmark / ("subset.tsv" if tsv else "subset.jsonl")
    return Spec(source.name if tsv else "jsonl", str(path))


def make_plan(study: Study, settings: StudySettings) -> StudyPlan:
    """The study's runs and judges (no file is read or written)."""
    unknown = [label for label in settings.only if label not in study.models]
    if unknown:
        raise SpecError(
            f"--only {', '.join(unknown)}: not a model of {study.path} "
            f"(models: {', '.join(study.models)})"
        )
    folder = settings.out / study.name
    runs: dict[str, RunJob] = {}
    judges: dict[str, list[JudgeJob]] = {}
    for model in study.models.values():
        concurrency = model.concurrency or settings.concurrency or study.concurrency
        for bench in study.benchmarks.values():
            key = run_key(model.label, bench.label)
            source = bench.spec if model.sample is None else subset_spec(folder, bench.label,
                                                                          bench.spec)  # fmt: skip
            options = RunOptions(
                bench=source, model=model.spec, out=folder / "runs", name=key,
                limit=bench.limit, concurrency=concurrency or DEFAULT_CONCURRENCY,
                prompt=bench.prompt, extract=bench.extract, probe=bench.probe, seed=study.seed,
                executor="local", cache=settings.cache, strategy=bench.strategy,
                exemplars=bench.exemplars, where=bench.where, sample=bench.sample,
                stratify=bench.stratify if bench.sample else None, exclude=bench.exclude,
                order=settings.order,
                model_info=f"cutoff={model.training_cutoff}" if model.training_cutoff else None,
            )  # fmt: skip
            runs[key] = RunJob(key, model.label, bench.label, options, endpoint(model.spec),
                               model.sample, model.adaptive)  # fmt: skip
            judges[key] = _judge_jobs(study, settings, key, bench.label, folder)
    return StudyPlan(study, settings, folder, runs, judges)


def _judge_jobs(
    study: Study, settings: StudySettings, key: str, bench: str, folder: Path
) -> list[JudgeJob]:
    jobs = []
    for judge in study.judges.values():
        if not judge.applies_to(bench):
            continue
        concurrency = judge.concurrency or settings.concurrency or study.concurrency
        options = JudgeOptions(
            run_dir=folder / "runs" / key, judge=judge.spec, protocol=judge.protocol,
            name=judge.label, scope=judge.scope, weights=dict(judge.weights),
            repeats=judge.repeats, concurrency=concurrency or DEFAULT_CONCURRENCY,
            images=judge.images, with_question=judge.with_question, reports=judge.reports,
            cache=settings.cache,
        )  # fmt: skip
        jobs.append(
            JudgeJob(f"{key}/{judge.label}", key, judge.label, options, endpoint(judge.spec))
        )
    return jobs
