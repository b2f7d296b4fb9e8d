"""The planner ``medlens run --adaptive`` hands the execution layer
(:class:`medlens.execution.batches.BatchPlanner`): it replays the design recorded so far,
then stops (target half-width reached, ``--max-items`` asked, or every item asked) or
chooses the next batch; and it keeps run.json's account of the design (``adaptive``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from medlens.core.errors import MedlensError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.items import adaptive_design as ad
from medlens.items.adaptive import (
    MIN_CALLS,
    RECORD_DIGITS,
    AdaptiveSettings,
    Predictor,
    check_settings,
    draws,
    read_predictor,
    replay,
)
from medlens.runs.layout import RUN_FILE

RUNNING = "running"
TARGET_REACHED = "target reached"
CAP_REACHED = "max items asked"
ALL_ASKED = "every item asked"


def answered_scores(records: Mapping[str, Record]) -> dict[str, float]:
    """Item id → score of the records the design can use (a score, no error)."""
    return {
        i: float(r["score"])
        for i, r in records.items()
        if r.get("error") is None and r.get("score") is not None
    }


class AdaptivePlanner:
    """Chooses an adaptive run's batches (the execution layer's ``BatchPlanner``)."""

    def __init__(self, settings: AdaptiveSettings) -> None:
        check_settings(settings)
        self.settings = settings
        self.predictor: Predictor = read_predictor(settings.bank, settings.baseline,
                                                   settings.stratify)  # fmt: skip
        self._items: list[str] = []
        self._model: ad.ItemModel | None = None
        self._design: dict[str, Any] = {}

    @property
    def spec(self) -> dict[str, Any]:
        return self.predictor.spec()

    def check(self, items: Sequence[Item], benchmark: Mapping[str, Any]) -> None:
        self.predictor.check(items, benchmark)
        self._items = [item.id for item in items]
        self._model = self.predictor.item_model(items)

    def total(self, n_items: int) -> int:
        cap = self.settings.max_items
        return n_items if cap is None else min(cap, n_items)

    def next_batch(
        self, records: Mapping[str, Record], recorded: Mapping[str, Any] | None, size: int
    ) -> list[str]:
        model = self._require_model()
        asked = list((recorded or {}).get("asked") or [])
        index = {item_id: j for j, item_id in enumerate(self._items)}
        found = replay(model, self.settings.seed, asked, index, answered_scores(records), RUN_FILE)
        if found.pending:
            self._design = self._record(asked, found.state, RUNNING)
            return [self._items[j] for j in found.pending]
        reason = self._stop(model, found.state)
        if reason is not None:
            self._design = self._record(asked, found.state, reason)
            return []
        batch = min(size, self.total(model.n_items) - found.state.calls)
        number = len(found.state.batches)
        chosen = ad.choose(model, found.state, draws(self.settings.seed, number, batch))
        rows = [
            {"id": self._items[j], "batch": number, "probability": _round(q), "prediction": _round(f)}
            for j, q, f in zip(chosen.order[0, -batch:].tolist(),
                               chosen.probability[0, -batch:].tolist(),
                               chosen.prediction[0, -batch:].tolist(), strict=True)
        ]  # fmt: skip
        self._design = self._record(asked + rows, found.state, RUNNING)
        return [row["id"] for row in rows]

    def design(self) -> dict[str, Any]:
        return dict(self._design)

    def _require_model(self) -> ad.ItemModel:
        if self._model is None:
            raise MedlensError("the adaptive planner was not given the run's items")
        return self._model

    def _stop(self, model: ad.ItemModel, state: ad.DesignState) -> str | None:
        calls, cap = state.calls, self.settings.max_items
        if calls >= model.n_items:
            return ALL_ASKED
        if calls >= max(MIN_CALLS, 2):
            half = float(ad.interval(model, state).half_width[0])
            if half <= self.settings.target_halfwidth:
                return TARGET_REACHED
        if cap is not None and calls >= cap:
            return CAP_REACHED
        return None

    def _record(
        self, asked: list[dict[str, Any]], state: ad.DesignState, status: str
    ) -> dict[str, Any]:
        model = self._require_model()
        out: dict[str, Any] = {
            "target_halfwidth": self.settings.target_halfwidth,
            "max_items": self.settings.max_items,
            "min_calls": MIN_CALLS,
            "status": status,
            "asked": asked,
        }
        if state.calls >= 2:
            found = ad.interval(model, state)
            out["estimate"] = {
                "estimate": _round(float(found.estimate[0])),
                "ci": [_round(float(found.low[0])), _round(float(found.high[0]))],
                "half_width": _round(float(found.half_width[0])),
                "n": state.calls,
            }
        return out


def _round(value: float) -> float:
    return round(float(value), RECORD_DIGITS)
