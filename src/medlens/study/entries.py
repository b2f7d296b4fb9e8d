"""What a study file says, parsed: models, benchmarks, judges and boards by label.

Each entry keeps the line it was written on, so that a problem found later (a benchmark that
does not load, a model backend that refuses its options) still names the file and line. The
`identity` of a study is the part of the file that decides what its runs and judges are; a
rerun compares it with the one ``study.json`` recorded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from medlens.analysis.cost import Price
from medlens.core.specs import Spec
from medlens.execution.strategies import ZERO_SHOT, Strategy
from medlens.models import model_identity


@dataclass(frozen=True)
class AdaptiveEntry:
    """A model's ``adaptive = {bank, target_halfwidth, max_items, baseline}``: its runs are
    adaptive (``run --adaptive``) instead of asking every item."""

    banks: dict[str, Path]
    """Benchmark label → BANK.json; ``"*"`` for one bank given as a path (every benchmark)."""
    target_halfwidth: float
    max_items: int | None = None
    baseline: str | None = None
    """The label of a model whose full run on the same benchmark predicts this one's."""

    def bank_for(self, benchmark: str) -> Path | None:
        return self.banks.get(benchmark, self.banks.get("*"))

    def identity(self) -> dict[str, Any]:
        """The predictor (target and cap change when the runs stop, not what they ask)."""
        return {"banks": {k: str(v) for k, v in sorted(self.banks.items())},
                "baseline": self.baseline}  # fmt: skip


@dataclass(frozen=True)
class ModelEntry:
    label: str
    spec: Spec
    concurrency: int | None = None
    """Requests in flight on this model's endpoint (None: the study's default)."""
    price: Price | None = None
    line: int = 1
    training_cutoff: str | None = None
    """``YYYY-MM``: recorded in each of its runs' run.json (``run --model-info``), not its identity."""
    sample: int | None = None
    """Items of the study's shared design subset this model answers (None: every item)."""
    adaptive: AdaptiveEntry | None = None
    """Adaptive runs (None: every item, or the `sample`)."""

    def identity(self) -> dict[str, Any]:
        found: dict[str, Any] = {"spec": model_identity(self.spec)}  # base_url is transport
        if self.sample is not None:  # absent otherwise: a study recorded before keeps its identity
            found["sample"] = self.sample
        if self.adaptive is not None:
            found["adaptive"] = self.adaptive.identity()
        return found


@dataclass(frozen=True)
class BenchmarkEntry:
    label: str
    spec: Spec
    limit: int | None = None
    where: str | None = None
    sample: int | None = None
    stratify: str | None = None
    strategy: Strategy = ZERO_SHOT
    prompt: str = "medlens"
    extract: str = "medlens"
    probe: str | None = None
    exemplars: Spec | None = None
    exclude: str | None = None
    line: int = 1

    def identity(self) -> dict[str, Any]:
        """Everything but `limit`, which (as for `run`) is no part of a run's spec: a study
        first run with a limit continues the same runs once the limit is raised or dropped."""
        return {
            "spec": str(self.spec),
            "where": self.where,
            "sample": self.sample,
            "stratify": self.stratify,
            "strategy": self.strategy.text,
            "prompt": self.prompt,
            "extract": self.extract,
            "probe": self.probe,
            "exemplars": None if self.exemplars is None else str(self.exemplars),
            "exclude": self.exclude,
        }


@dataclass(frozen=True)
class JudgeEntry:
    label: str
    spec: Spec
    protocol: str
    scope: str | None = None
    benchmarks: tuple[str, ...] | None = None
    """Benchmark labels the judge applies to (None: all of them)."""
    repeats: int = 1
    weights: dict[str, float] = field(default_factory=dict)
    images: bool = False
    with_question: bool = False
    reports: bool = False
    concurrency: int | None = None
    price: Price | None = None
    line: int = 1
    protocol_line: int = 1

    def applies_to(self, benchmark: str) -> bool:
        return self.benchmarks is None or benchmark in self.benchmarks

    def identity(self) -> dict[str, Any]:
        return {
            "spec": model_identity(self.spec),
            "protocol": self.protocol,
            "scope": self.scope,
            "benchmarks": None if self.benchmarks is None else sorted(self.benchmarks),
            "repeats": self.repeats,
            "weights": dict(sorted(self.weights.items())),
            "images": self.images,
            "with_question": self.with_question,
            "reports": self.reports,
        }


@dataclass(frozen=True)
class BoardEntry:
    name: str
    """The board's file name under ``boards/`` (default: its benchmark's label)."""
    benchmark: str
    layout: str | None = None
    """A paper layout (``medcmr``, ``mmbu``, ``gmai``: ``board --layout``)."""
    judge: str | None = None
    """The judge label whose verdicts score the layout's judged columns (default: the one
    judge of the benchmark, when the layout has judged columns and the study one such judge)."""
    score: str | None = None
    """``rules``, ``judge:LABEL`` or ``combined:LABEL`` (``board --score``); None: rules, or
    ``combined:`` the layout's judge."""
    score_judge: str | None = None
    """The judge label `score` names (None for rules)."""
    pairs: tuple[tuple[str, str], ...] = ()
    """(base, tuned) model labels."""
    meta: Path | None = None
    reference: str | None = None
    by: tuple[str, ...] = ()
    where: str = ""
    line: int = 1
    allow_partial: bool | None = None
    """``board --allow-partial``: keep runs not comparable with the published table, labelled.
    None: the default — refuse with an explicit `reference` (checked before the study's first
    request), label with a layout's own table."""

    @property
    def keeps_partial(self) -> bool:
        """Whether runs off the published item set are kept (labelled) rather than refused."""
        return self.allow_partial if self.allow_partial is not None else self.reference is None


@dataclass(frozen=True)
class Study:
    """A study file, checked and parsed."""

    name: str
    path: Path
    sha256: str
    """Of the file's bytes, recorded in study.json."""
    models: dict[str, ModelEntry]
    benchmarks: dict[str, BenchmarkEntry]
    judges: dict[str, JudgeEntry] = field(default_factory=dict)
    boards: tuple[BoardEntry, ...] = ()
    seed: int = 0
    concurrency: int | None = None
    budget: float | None = None
    budget_line: int = 1

    def identity(self) -> dict[str, Any]:
        """What decides the study's runs and judges: not concurrency, prices, budget, limits or
        boards (they change how fast, how far or how the results are shown, not what they are)."""
        return {
            "seed": self.seed,
            "models": {label: m.identity() for label, m in self.models.items()},
            "benchmarks": {label: b.identity() for label, b in self.benchmarks.items()},
            "judges": {label: j.identity() for label, j in self.judges.items()},
        }
