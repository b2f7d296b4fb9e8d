"""Answers cut at the token cap and empty answers, overall and per slice, never silent.

Every report (text, markdown, HTML) and the run summary print these lines through
``protocol_lines``: the rate of answers whose backend stopped at the token cap (finish reason
``length``) and of empty answers, overall and for the slices of each axis that have any, and a
warning when either exceeds :data:`WARN_RATE` overall or in a slice. Both kinds count as wrong;
a high rate means the number measures the token budget, not the model.
"""

from __future__ import annotations

from typing import Any

WARN_RATE = 0.01
SHOWN_SLICES = 6


def _percent(value: float | None) -> str:
    return "not reported by this backend" if value is None else f"{100 * value:.1f}%"


def integrity_lines(results: dict[str, Any]) -> list[str]:
    """``answers cut at the token cap: 2.0%; empty answers: 0.5% (of 200 answered)`` and more."""
    if not results.get("counts", {}).get("records"):
        return []
    rates = results.get("rates") or {}
    truncated, empty = rates.get("truncated"), float(rates.get("empty") or 0.0)
    answered = results["counts"]["records"] - results["counts"].get("errors", 0)
    lines = [
        f"answers cut at the token cap: {_percent(truncated)}; empty answers: "
        f"{_percent(empty)} (of {answered} answered; max tokens {_cap(results)})"
    ]
    over: list[str] = []
    for axis, cells in (results.get("by") or {}).items():
        marked = [(value, cell) for value, cell in cells.items() if _worst(cell) > 0]
        if not marked or len(cells) < 2:
            continue
        marked.sort(key=lambda pair: -_worst(pair[1]))
        parts = [f"{value} {_pair(cell)}" for value, cell in marked[:SHOWN_SLICES]]
        more = f" (+{len(marked) - SHOWN_SLICES} more)" if len(marked) > SHOWN_SLICES else ""
        lines.append(f"  by {axis}: " + "; ".join(parts) + more)
        over += [f"{axis}={value}" for value, cell in marked if _worst(cell) > WARN_RATE]
    if (truncated or 0.0) > WARN_RATE or empty > WARN_RATE or over:
        lines.append(_warning(truncated, empty, over, _cap(results)))
    return lines


def _worst(cell: dict[str, Any]) -> float:
    return max(float(cell.get("truncated") or 0.0), float(cell.get("empty") or 0.0))


def _pair(cell: dict[str, Any]) -> str:
    cut = cell.get("truncated")
    shown = "–" if cut is None else f"{100 * cut:.1f}%"
    return f"cut {shown}, empty {100 * float(cell.get('empty') or 0.0):.1f}% (n={cell['n']})"


def _warning(truncated: float | None, empty: float, over: list[str], cap: str) -> str:
    said = []
    if (truncated or 0.0) > WARN_RATE:
        said.append(f"{100 * (truncated or 0.0):.1f}% of answers were cut at the token cap")
    if empty > WARN_RATE:
        said.append(f"{100 * empty:.1f}% of answers are empty")
    where = f"; slices above {100 * WARN_RATE:.0f}%: {', '.join(over[:8])}" if over else ""
    head = "; ".join(said) or "some slices lose answers"
    advice = (
        f"raise the token cap (max tokens {cap}) and rerun"
        if (truncated or 0.0) > WARN_RATE
        else "check the backend and the prompt"
    )
    return f"warning: {head}{where}. They count as wrong: {advice}"


def _cap(results: dict[str, Any]) -> str:
    """The run's token cap as the model spec sets it (``models.limits``)."""
    from medlens.models.limits import max_tokens_text
    from medlens.runs.recorded import stored_spec

    spec = results.get("spec") or {}
    try:
        return max_tokens_text(stored_spec(str(spec.get("model", ""))), spec.get("params"))
    except Exception:  # an old or hand-edited run.json: the report still renders
        return "unknown"
