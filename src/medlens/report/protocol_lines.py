"""Report lines for the protocol figures of issue 15: the single/multi line of choice
benchmarks and the per-kind corpus metrics with n and CI.

Every renderer (text, markdown, html) shows the same lines; each line is plain text, escaped by
the renderer that prints it.
"""

from __future__ import annotations

from typing import Any

_NOTES = {"chexpert_f1": "rule-based labeller, uncertain = negative"}


def corpus_metric_lines(results: dict[str, Any]) -> list[str]:
    """One line per kind: ``open: contains 0.694 [0.688, 0.700] (n=26000), …``."""
    lines = []
    for kind, metrics in (results.get("metrics") or {}).items():
        parts = [_metric_text(name, cell) for name, cell in metrics.items()]
        if parts:
            lines.append(f"{kind} corpus metrics: " + ", ".join(parts))
    return lines


def _metric_text(name: str, cell: dict[str, Any]) -> str:
    value, ci = cell.get("value"), cell.get("ci")
    shown = "–" if value is None else f"{value:.3f}"
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    note = f"; {_NOTES[name]}" if name in _NOTES else ""
    return f"{name} {shown}{interval} (n={cell.get('n', 0)}{note})"


def single_multi_line(results: dict[str, Any]) -> list[str]:
    """``single/multi: 1,200 single-answer (score 0.512), 300 multi-answer …; how told apart``."""
    summary = results.get("single_multi")
    if not summary:
        return []
    parts = []
    for name in ("single", "multi"):
        cell = summary[name]
        score = (
            f", score {cell['score']:.3f} over {cell['scored']}"
            if cell["score"] is not None
            else ""
        )
        parts.append(f"{cell['n']:,} {name}-answer{score}")
    return [f"single/multi: {', '.join(parts)}; {summary['note']}"]


def protocol_lines(results: dict[str, Any]) -> list[str]:
    """Every protocol line of a report, in order."""
    return single_multi_line(results) + corpus_metric_lines(results)
