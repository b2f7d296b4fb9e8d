"""What a run's requests carried for generation, recorded in run.json (outside the spec, so a
run's hash is unchanged) for the protocol card: the backend's fields, the ones left to the
server, and self-consistency's sampling."""

from __future__ import annotations

from typing import Any

from medlens.execution.requests import RunSettings
from medlens.execution.strategies import SELF_CONSISTENCY_TEMPERATURE, sample_params

SHOWN = ("temperature", "max_tokens", "seed")
"""Fields the card always names, saying so when a request left them to the server."""


def generation_record(model: Any, settings: RunSettings) -> dict[str, Any]:
    """``{"sent": {...} | None, "note": str, "self_consistency": {...}}`` for run.json."""
    sent = getattr(model, "generation", None)
    record: dict[str, Any] = {
        "sent": {**dict(sent), **dict(settings.params)} if sent is not None else None,
        "note": "" if sent is not None else str(getattr(model, "generation_note", "not known")),
    }
    draws = settings.strategy.samples
    if draws > 1:
        seeds = [sample_params({}, settings.seed, k)["seed"] for k in (0, draws - 1)]
        record["self_consistency"] = {
            "draws": draws, "temperature": SELF_CONSISTENCY_TEMPERATURE, "seeds": seeds,
        }  # fmt: skip
    return record


def generation_text(record: dict[str, Any] | None, params: dict[str, Any]) -> str:
    """The card's "generation parameters" row."""
    if record is None:
        return f"not recorded (a run from before medlens recorded it; run params {params or {}})"
    sent = record.get("sent")
    if sent is None:
        return str(record.get("note") or "none sent")
    text = ", ".join(f"{key} {value:g}" if isinstance(value, float) else f"{key} {value}"
                     for key, value in sent.items())  # fmt: skip
    unsent = [key for key in SHOWN if key not in sent]
    if unsent:
        text += f"; {', '.join(unsent)}: not sent (the server's defaults)"
    return text


def self_consistency_text(record: dict[str, Any] | None) -> str | None:
    """The card's "self-consistency" row (None when the run drew one answer per item)."""
    drawn = (record or {}).get("self_consistency")
    if not drawn:
        return None
    first, last = drawn["seeds"]
    return (
        f"{drawn['draws']} draws per item at temperature {drawn['temperature']:g}, "
        f"seeds {first}–{last} (run seed × 1000 + draw)"
    )
