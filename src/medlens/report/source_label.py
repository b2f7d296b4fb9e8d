"""How a report says which scores it shows (``--score``): a title suffix, protocol rows and
the coverage warning, from results.json's ``score_source`` and ``score_coverage``."""

from __future__ import annotations

from typing import Any


def source_suffix(results: dict[str, Any]) -> str:
    """`` (scores: judge NAME (judged scope only), coverage 38/40 (95.0%))``; "" for rules."""
    from medlens.analysis.score_source import coverage_text, parse_score_source

    label = results.get("score_source", "rules")
    if label == "rules":
        return ""
    cover = coverage_text(results.get("score_coverage"))
    return f" ({parse_score_source(label).title()}{', ' + cover if cover else ''})"


def score_rows(results: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The protocol row naming a judged score source, and its warning."""
    suffix = source_suffix(results)
    if not suffix:
        return ()
    rows = [("scores", suffix.strip()[1:-1].removeprefix("scores: "))]
    warning = (results.get("score_coverage") or {}).get("warning")
    if warning:
        rows.append(("warning", warning))
    return tuple(rows)


def source_lines(results: dict[str, Any]) -> list[str]:
    """Lines for the text report (the same content as :func:`score_rows`)."""
    return [f"{name}: {value}" for name, value in score_rows(results)]
