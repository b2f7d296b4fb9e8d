"""What a run's requests carried for generation, recorded in run.json (outside the spec, so a
run's hash is unchanged) for the protocol card: the backend's fields, the ones left to the
server, and self-consistency's sampling."""

from __future__ import annotations

from collections.abc import Callable
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
    draws = settings.strategy.refine or settings.strategy.samples
    if draws > 1 or settings.strategy.refine:
        seeds = [sample_params({}, settings.seed, k)["seed"] for k in (0, draws - 1)]
        key = "ensemble_refinement" if settings.strategy.refine else "self_consistency"
        record[key] = {
            "draws": draws, "temperature": SELF_CONSISTENCY_TEMPERATURE, "seeds": seeds,
        }  # fmt: skip
    return record


BACKEND_RECORDS = ("image_settings", "server")
"""What a backend settled when it loaded (``hf:``'s family and image resolution, a started
server's command, version and determinism): recorded in run.json beside the spec."""


def record_backend(run: dict[str, Any], model: Any, note: Callable[[str], None]) -> None:
    """Copy the backend's records into `run` (run.json); a resumed run whose image settings
    changed since it started is told (its answers were made at two resolutions)."""
    for key in BACKEND_RECORDS:
        value = getattr(model, key, None)
        if value is None:
            continue
        before = run.get(key)
        if key == "image_settings" and before is not None and before != value:
            note(
                f"the image settings changed since this run started ({before} → {value}): "
                "its earlier answers were made at the old ones"
            )
        run[key] = value


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
    refined = (record or {}).get("ensemble_refinement")
    drawn: dict[str, Any] | None = refined or (record or {}).get("self_consistency")
    if not drawn:
        return None
    first, last = drawn["seeds"]
    sampled = (
        f"at temperature {drawn['temperature']:g}, seeds {first}–{last} (run seed × 1000 + draw)"
    )
    if refined:
        return (
            f"ensemble refinement: {drawn['draws']} reasoning paths per item {sampled}, then "
            "one refining request at the run's own parameters that reads them"
        )
    return f"{drawn['draws']} draws per item {sampled}"
