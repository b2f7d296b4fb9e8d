"""``medlens run --adaptive BANK.json --target-halfwidth H``: the planner of an adaptive run's
batches, and the replay of a recorded design that the planner, ``estimate`` and a resumed run
share.

The design and its estimate are :mod:`medlens.items.adaptive_design`'s. Here: the predictor's
fixed part is built from the bank (its items' parameters, mapped onto the run's items by id),
the baseline run's scores and the ``--stratify`` axes (groups); batch t's uniforms come from
``numpy.random.default_rng([seed, t])``, so the design is a function of the seed and the answers:
a rerun replays the recorded batches (checking each is what the design chooses), asks what a
killed batch left unanswered, and goes on with the same next batch.

The run spec records ``adaptive``: method, bank (path, sha256), baseline (path, scores_sha256,
score, n), the groups' axes and the floor share (a rerun with other ones is another spec).
run.json records, outside the spec, the design so far (:func:`design_record`): the target, the
item cap, every asked item's id, batch, selection probability and prediction in the order
asked, the status and the last estimate. Target and cap may change on a rerun (the draws do not
depend on them): a smaller target goes on asking where the run stopped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from medlens.core.errors import MedlensError, SpecError
from medlens.core.items import Item
from medlens.core.where import check_axes
from medlens.items import adaptive_design as ad
from medlens.items.bank import Bank, read_bank
from medlens.items.baseline import Baseline, check_same_items, read_baseline
from medlens.runs.layout import RUN_FILE

METHOD = "sequential active sampling without replacement, Horvitz–Thompson corrected predictions"
MIN_CALLS = 40
"""No stop on the target before this many answers (the variance estimate needs some)."""
DIFFICULTY_THIRDS = 3
RECORD_DIGITS = 12


@dataclass(frozen=True)
class AdaptiveSettings:
    """What ``run --adaptive`` was asked."""

    bank: Path | None
    baseline: Path | None
    target_halfwidth: float
    max_items: int | None = None
    stratify: tuple[str, ...] = ()
    seed: int = 0
    first_batch: int = 8
    """The first batch's size (``--concurrency``): ``--max-items`` below it is refused."""


def check_settings(settings: AdaptiveSettings) -> None:
    """Refuse a target, cap or predictor that cannot make an adaptive run."""
    h = settings.target_halfwidth
    if not 0 < h < 0.5:
        raise SpecError(f"--target-halfwidth {h:g}: expected a half-width above 0 and below 0.5")
    cap = settings.max_items
    if cap is not None and cap < settings.first_batch:
        raise SpecError(
            f"--max-items {cap}: below the first batch ({settings.first_batch} items, "
            "--concurrency); ask for at least one batch"
        )
    if settings.bank is None and settings.baseline is None:
        raise SpecError(
            "an adaptive run needs a predictor: --adaptive BANK.json, --baseline RUN or both"
        )


@dataclass(frozen=True)
class Predictor:
    """The bank and the baseline an adaptive run predicts with (either may be absent)."""

    bank: Bank | None
    baseline: Baseline | None
    stratify: tuple[str, ...]

    def spec(self) -> dict[str, Any]:
        return {
            "method": METHOD,
            "bank": None if self.bank is None
            else {"path": str(self.bank.path.resolve()), "sha256": self.bank.sha256},
            "baseline": None if self.baseline is None else self.baseline.to_spec(),
            "stratify": list(self.stratify),
            "floor_share": ad.FLOOR_SHARE,
        }  # fmt: skip

    def check(self, items: Sequence[Item], benchmark: Mapping[str, Any]) -> None:
        """The bank's and the baseline's items are the run's (same content, same ids), every
        item has an answer key, and the axes exist."""
        content, ids = str(benchmark.get("content_hash") or ""), [item.id for item in items]
        what = str(benchmark.get("spec") or "the benchmark")
        if self.bank is not None:
            if self.bank.benchmark.get("content_hash") != content:
                raise MedlensError(
                    f"{self.bank.path}: a bank of {self.bank.benchmark.get('spec')} (content "
                    f"{str(self.bank.benchmark.get('content_hash'))[:12]}), not of {what} "
                    f"(content {content[:12]})"
                )
            if set(self.bank.ids) != set(ids):
                raise MedlensError(f"{self.bank.path}: the bank's item ids are not those of {what}")
        if self.baseline is not None:
            check_same_items(self.baseline, content, ids, what)
        unanswered = [item.id for item in items if item.answer is None]
        if unanswered:
            raise MedlensError(
                f"{what}: {len(unanswered)} items have no answer key (first: {unanswered[0]!r}); "
                "an adaptive run needs scores"
            )
        axes = sorted({axis for item in items for axis in item.meta} | {"kind"})
        check_axes(self.stratify, axes, "--stratify")

    def item_model(self, items: Sequence[Item]) -> ad.ItemModel:
        """The design's fixed part for `items` (in the run's item order)."""
        keys = ["|".join(_axis_value(item, axis) for axis in self.stratify) for item in items]
        names = sorted(set(keys))
        group = np.array([names.index(key) for key in keys], dtype=np.int64)
        a = b = c = None
        start, third = 0.0, np.zeros(len(items), dtype=np.int64)
        if self.bank is not None:
            column = {item_id: j for j, item_id in enumerate(self.bank.ids)}
            order = np.array([column[item.id] for item in items])
            a, b, c = (v[order] for v in (self.bank.discrimination, self.bank.difficulty,
                                          self.bank.guess))  # fmt: skip
            start = float(np.median([theta for theta, _ in self.bank.abilities.values()]))
            middle = self.bank.predict(start)[order]
            edges = np.quantile(middle, np.arange(1, DIFFICULTY_THIRDS) / DIFFICULTY_THIRDS)
            third = np.searchsorted(edges, middle).astype(np.int64)
        baseline = None
        if self.baseline is not None:
            baseline = np.array([[self.baseline.scores[item.id] for item in items]])
        return ad.ItemModel(
            discrimination=a, difficulty=b, guess=c, group=group, n_groups=len(names),
            cell=group * DIFFICULTY_THIRDS + third, n_cells=len(names) * DIFFICULTY_THIRDS,
            baseline=baseline, start=start,
        )  # fmt: skip


def _axis_value(item: Item, axis: str) -> str:
    return item.kind if axis == "kind" and "kind" not in item.meta else item.meta.get(axis, "")


def read_predictor(bank: Path | None, baseline: Path | None, stratify: Sequence[str]) -> Predictor:
    return Predictor(
        bank=None if bank is None else read_bank(bank),
        baseline=None if baseline is None else read_baseline(baseline),
        stratify=tuple(stratify),
    )


def draws(seed: int, batch: int, size: int) -> np.ndarray:
    """Batch `batch`'s uniforms: a function of the seed and the batch's number only."""
    return np.random.default_rng([seed, batch]).random((1, size))


@dataclass(frozen=True)
class Replay:
    """A recorded design replayed: the state after its last answered batch, and the batch
    recorded after it whose answers are not all in (empty when none)."""

    state: ad.DesignState
    pending: list[int]


class DesignMismatchError(MedlensError):
    """A recorded design is not what the design chooses from its bank, baseline and answers."""


def replay(
    model: ad.ItemModel,
    seed: int,
    asked: Sequence[Mapping[str, Any]],
    index: Mapping[str, int],
    scores: Mapping[str, float],
    where: str,
) -> Replay:
    """Step the design through the recorded batches (``asked`` rows in order), checking each."""
    state = ad.start_state(model, 1)
    batches: dict[int, list[Mapping[str, Any]]] = {}
    for row in asked:
        batches.setdefault(int(row["batch"]), []).append(row)
    for number, rows in enumerate(batches.values()):
        chosen = ad.choose(model, state, draws(seed, number, len(rows)))
        recorded = [index.get(str(row["id"]), -1) for row in rows]
        if chosen.order[0, -len(rows):].tolist() != recorded or not np.allclose(
            chosen.probability[0, -len(rows):], [float(row["probability"]) for row in rows],
            rtol=1e-9, atol=0.0,
        ):  # fmt: skip
            raise DesignMismatchError(
                f"{where}: batch {number + 1} of the recorded design is not what the design "
                f"chooses from this bank, baseline and seed (another bank or baseline, or an "
                f"edited {RUN_FILE}?)"
            )
        if any(str(row["id"]) not in scores for row in rows):
            return Replay(state, recorded)
        values = np.array([[scores[str(row["id"])] for row in rows]])
        state = ad.absorb(model, chosen, values)
    return Replay(state, [])
