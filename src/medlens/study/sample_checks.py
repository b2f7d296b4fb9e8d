"""Checks of models that say ``sample = N``, made when the study file is read (issue 31).

A model with ``sample = N`` answers the study's shared design subset of each benchmark (N items
drawn by ``medlens items sample`` from an item bank the study fits on its full runs) instead of
every item. What the file must then say, else one error naming the file, line and key:

- every sampled model asks for the same N (one subset per benchmark, shared by all of them, so
  their estimates rest on the same items);
- at least 5 models run every item (``items fit`` needs 5 runs to fit the bank);
- no benchmark narrows its full runs (``limit``, ``where``, ``sample``, ``exclude``: the bank and
  the design cover the whole benchmark, and the estimate is of the whole benchmark) or probes
  them (``probe``: a probed run is not the model's own answer, and the bank refuses it);
- no board pairs a sampled model (a paired difference needs both models on the same items).

A benchmark's ``stratify`` without its own ``sample`` names the design's axes (strata besides
the bank's predicted difficulty); without sampled models it is refused as before (it needs a
``sample``). Whether N is below each benchmark's item count is checked when the study is
planned (the benchmark must be loaded), still before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from medlens.items.responses import MIN_RUNS
from medlens.study.board_checks import Failing
from medlens.study.entries import BenchmarkEntry, BoardEntry, ModelEntry

NARROWING = ("limit", "where", "sample", "exclude", "probe")
"""Benchmark keys refused beside sampled models."""


def check_sampled_models(
    study: Failing,
    models: Mapping[str, ModelEntry],
    benchmarks: Mapping[str, BenchmarkEntry],
    boards: Sequence[BoardEntry],
) -> None:
    """The rules of the module docstring, in the order a user meets them in the file."""
    sampled = [m for m in models.values() if m.sample is not None]
    if not sampled:
        _check_stratify_needs_sample(study, benchmarks)
        return
    first = sampled[0]
    for model in sampled[1:]:
        if model.sample != first.sample:
            study.fail(("models", model.label, "sample"),
                       f"{model.sample}: models.{first.label} samples {first.sample}; a study "
                       "draws one subset per benchmark, shared by every sampled model, so give "
                       "them the same sample = N")  # fmt: skip
    full = [m.label for m in models.values() if m.sample is None and m.adaptive is None]
    if len(full) < MIN_RUNS:
        study.fail(("models", first.label, "sample"),
                   f"{first.sample}: the item bank behind a sampled model is fitted on the "
                   f"models that run every item, at least {MIN_RUNS}; this study has "
                   f"{len(full)} ({', '.join(full) or 'none'})")  # fmt: skip
    for bench in benchmarks.values():
        for key in NARROWING:
            if getattr(bench, key) is not None:
                study.fail(("benchmarks", bench.label, key),
                           f"{key} with models that sample (models.{first.label}.sample): the "
                           "bank and the design subset cover every item of the benchmark, so "
                           "the full runs must too (drop it, or give the sampled models their "
                           "own study)")  # fmt: skip
    _check_pairs(study, boards, {m.label for m in sampled})


def _check_stratify_needs_sample(study: Failing, benchmarks: Mapping[str, BenchmarkEntry]) -> None:
    for bench in benchmarks.values():
        if bench.stratify is not None and bench.sample is None:
            study.fail(("benchmarks", bench.label, "stratify"),
                       "needs sample = N on the benchmark (or a model with sample = N, whose "
                       "design it stratifies)")  # fmt: skip


def _check_pairs(study: Failing, boards: Sequence[BoardEntry], sampled: set[str]) -> None:
    for index, board in enumerate(boards):
        for base, tuned in board.pairs:
            for label in (base, tuned):
                if label in sampled:
                    study.fail(("boards", index, "pairs"),
                               f"{base}:{tuned}: {label} answers a sampled subset, so it has "
                               "no item-by-item pairing with a full run; pair full runs only")  # fmt: skip
