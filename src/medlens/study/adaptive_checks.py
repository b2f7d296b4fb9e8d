"""Models of a study with ``adaptive = {bank = "…", target_halfwidth = 0.02}`` (issue 43):
the entry parsed, and the checks made when the study file is read.

A model's ``adaptive`` table takes ``bank`` (a BANK.json path for every benchmark, or a table of
benchmark label → path), ``target_halfwidth`` (above 0, below 0.5), ``max_items`` and
``baseline`` (the label of a model of the study that runs every item: its run on the same
benchmark predicts this model's, as ``run --baseline``). At least one of ``bank`` and
``baseline``. What the file must then say, else one error naming the file, line and key:

- the model does not also ``sample`` (one way of asking fewer items per model);
- a ``baseline`` names another model that runs every item (neither adaptive nor sampled);
- a bank table names benchmarks of the study, and covers every benchmark unless ``baseline``
  predicts the others;
- no benchmark narrows or probes its runs (``limit``, ``where``, ``sample``, ``exclude``,
  ``probe``): an adaptive run draws from every item of the benchmark, with the model's own
  answers;
- no board pairs an adaptive model (its items are not the other model's).

Adaptive runs are made after the full runs (their baselines must be finished); whether each
bank is a bank of its benchmark is checked when the run starts (the benchmark is loaded then).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medlens.study.board_checks import Failing
from medlens.study.entries import AdaptiveEntry, BenchmarkEntry, BoardEntry, ModelEntry
from medlens.study.tomlkeys import KeyPath

ADAPTIVE_KEYS = ("bank", "target_halfwidth", "max_items", "baseline")
NARROWING = ("limit", "where", "sample", "exclude", "probe")


def parse_adaptive(study: Failing, key: KeyPath, raw: Any) -> AdaptiveEntry | None:
    """A model's ``adaptive`` table (None when absent)."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        study.fail(
            key, 'expected a table: adaptive = { bank = "BANK.json", target_halfwidth = 0.02 }'
        )
    for name in raw:
        if name not in ADAPTIVE_KEYS:
            study.fail((*key, name), f"unknown key (known: {', '.join(ADAPTIVE_KEYS)})")
    half = raw.get("target_halfwidth")
    if not isinstance(half, (int, float)) or isinstance(half, bool) or not 0 < half < 0.5:
        study.fail((*key, "target_halfwidth"),
                   f"{half!r}: expected a half-width above 0 and below 0.5, e.g. 0.02")  # fmt: skip
    cap = raw.get("max_items")
    if cap is not None and (not isinstance(cap, int) or isinstance(cap, bool) or cap < 1):
        study.fail((*key, "max_items"), f"{cap!r}: expected a whole number of items, at least 1")
    baseline = raw.get("baseline")
    if baseline is not None and (not isinstance(baseline, str) or not baseline.strip()):
        study.fail((*key, "baseline"), f"{baseline!r}: expected the label of a model of the study")
    banks = _banks(study, (*key, "bank"), raw.get("bank"))
    if not banks and baseline is None:
        study.fail(key, 'needs a predictor: bank = "BANK.json", baseline = "MODEL" or both')
    return AdaptiveEntry(banks, float(half), cap, None if baseline is None else baseline.strip())


def _banks(study: Failing, key: KeyPath, raw: Any) -> dict[str, Path]:
    if raw is None:
        return {}
    if isinstance(raw, str) and raw.strip():
        return {"*": Path(raw.strip())}
    if (
        isinstance(raw, dict)
        and raw
        and all(isinstance(v, str) and v.strip() for v in raw.values())
    ):
        return {str(label): Path(path.strip()) for label, path in raw.items()}
    study.fail(key, 'expected a path, or a table of benchmark label = "BANK.json"')


def check_adaptive_models(
    study: Failing,
    models: Mapping[str, ModelEntry],
    benchmarks: Mapping[str, BenchmarkEntry],
    boards: Sequence[BoardEntry],
) -> None:
    """The rules of the module docstring, in the order a user meets them in the file."""
    adaptive = [m for m in models.values() if m.adaptive is not None]
    for model in adaptive:
        _check_model(study, model, models, benchmarks)
    if not adaptive:
        return
    first = adaptive[0]
    for bench in benchmarks.values():
        for key in NARROWING:
            if getattr(bench, key) is not None:
                study.fail(("benchmarks", bench.label, key),
                           f"{key} with adaptive models (models.{first.label}.adaptive): an "
                           "adaptive run draws from every item of the benchmark with the "
                           "model's own answers (drop it, or give the adaptive models their "
                           "own study)")  # fmt: skip
    labels = {m.label for m in adaptive}
    for index, board in enumerate(boards):
        for base, tuned in board.pairs:
            for label in (base, tuned):
                if label in labels:
                    study.fail(("boards", index, "pairs"),
                               f"{base}:{tuned}: {label} is adaptive, so it has no item-by-item "
                               "pairing with a full run; pair full runs only")  # fmt: skip


def _check_model(
    study: Failing,
    model: ModelEntry,
    models: Mapping[str, ModelEntry],
    benchmarks: Mapping[str, BenchmarkEntry],
) -> None:
    entry, key = model.adaptive, ("models", model.label, "adaptive")
    assert entry is not None
    if model.sample is not None:
        study.fail(("models", model.label, "sample"),
                   "with adaptive: a model either samples a shared subset or runs adaptively")  # fmt: skip
    if entry.baseline is not None:
        other = models.get(entry.baseline)
        if other is None or other.label == model.label:
            study.fail((*key, "baseline"), f"{entry.baseline!r}: not another model of the study "
                       f"(models: {', '.join(models)})")  # fmt: skip
        if other.sample is not None or other.adaptive is not None:
            study.fail((*key, "baseline"), f"{entry.baseline!r}: a baseline must run every item "
                       "(it samples or runs adaptively)")  # fmt: skip
    for label in entry.banks:
        if label != "*" and label not in benchmarks:
            study.fail((*key, "bank", label), f"not a benchmark of the study (benchmarks: "
                       f"{', '.join(benchmarks)})")  # fmt: skip
    if entry.baseline is None:
        missing = [label for label in benchmarks if entry.bank_for(label) is None]
        if missing:
            study.fail((*key, "bank"), f"no bank for benchmark {missing[0]!r} (and no baseline "
                       "to predict with)")  # fmt: skip
