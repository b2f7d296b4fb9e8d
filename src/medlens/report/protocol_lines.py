"""Report lines for the protocol figures of issue 15: the single/multi line of choice
benchmarks and the per-kind corpus metrics with n and CI.

Every renderer (text, markdown, html) shows the same lines; each line is plain text, escaped by
the renderer that prints it.
"""

from __future__ import annotations

from typing import Any

_NOTES = {
    "chexpert_f1": "rule-based labeller, uncertain = negative",
    "chexpert_f1_uncertain_positive": "uncertain = positive",
    "chexpert_f1_uncertain_ignore": "uncertain findings left out",
    "chexpert_macro_f1_14": "rule-based labeller, macro over 14 labels, uncertain = negative",
    "chexpert_micro_f1_5": "rule-based labeller, micro over 5 major findings",
    "chexpert_macro_f1_5": "rule-based labeller, macro over 5 major findings",
}


def corpus_metric_lines(results: dict[str, Any]) -> list[str]:
    """One line per kind: ``open: contains 0.694 [0.688, 0.700] (n=26000), …``."""
    lines = []
    for kind, metrics in (results.get("metrics") or {}).items():
        parts = [_metric_text(name, cell) for name, cell in metrics.items()]
        if parts:
            lines.append(f"{kind} corpus metrics: " + ", ".join(parts))
    return lines


def _metric_text(name: str, cell: dict[str, Any]) -> str:
    return f"{name} {_value_text(cell, _NOTES.get(name))}"


def _value_text(cell: dict[str, Any], note: str | None = None) -> str:
    """``0.612 [0.580, 0.641] (n=900)``."""
    value, ci = cell.get("value"), cell.get("ci")
    shown = "–" if value is None else f"{value:.3f}"
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    notes = "".join(f"; {text}" for text in (note, cell.get("note")) if text)
    return f"{shown}{interval} (n={cell.get('n', 0)}{notes})"


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


def mmbu_lines(results: dict[str, Any]) -> list[str]:
    """MMBU's headline (micro-F1 per task and form, chance) and the paired closed−open Δ."""
    section = results.get("mmbu")
    if not section:
        return []
    parts = []
    for task, forms in section["tasks"].items():
        for form, cell in forms.items():
            chance = "none" if cell["chance"] is None else f"{cell['chance']:.3f}"
            parts.append(f"{task} {form} {_value_text(cell)} chance {chance}")
    lines = ["MMBU micro-F1 per task: " + "; ".join(parts)] if parts else []
    delta = section.get("paired_delta")
    if delta:
        lo, hi = delta["delta_ci"]
        lines.append(
            f"MMBU closed−open Δ paired per sample: {delta['delta']:+.3f} [{lo:+.3f}, {hi:+.3f}] "
            f"(n={delta['n_pairs']} pairs; closed {delta['closed']:.3f}, open {delta['open']:.3f}; "
            f"{delta['unpaired']} items without a partner)"
        )
    return lines


def variant_calling_lines(results: dict[str, Any]) -> list[str]:
    """``variant calls: SNV F1 0.912 [0.880, 0.940] (P 0.93, R 0.89, n=400); indel …``."""
    section = results.get("variant_calling")
    if not section:
        return []

    def shown(value: float | None) -> str:
        return "–" if value is None else f"{value:.3f}"

    parts = []
    for name, cell in section.items():
        ci = f" [{cell['ci'][0]:.3f}, {cell['ci'][1]:.3f}]" if cell["ci"] else ""
        parts.append(
            f"{name} F1 {shown(cell['f1'])}{ci} (precision {shown(cell['precision'])}, "
            f"recall {shown(cell['recall'])}, n={cell['n']}"
            + (f"; {cell['note']})" if cell.get("note") else ")")
        )
    return ["variant calls (genotype match): " + "; ".join(parts)]


def peer_lines(results: dict[str, Any]) -> list[str]:
    """``medevalkit's own figures: total acc 0.500 [0.2, 0.8] (n=10), …`` for a peer-mode run."""
    section = results.get("peer")
    if not section:
        return []
    parts = [f"{name} {_value_text(cell)}" for name, cell in section["figures"].items()]
    return [f"{section['mode']}'s own figures (its verdicts): " + ", ".join(parts)]


def protocol_lines(results: dict[str, Any]) -> list[str]:
    """Every protocol line of a report, in order."""
    from medlens.report.answer_integrity import integrity_lines

    return (
        peer_lines(results)
        + integrity_lines(results)
        + single_multi_line(results)
        + mmbu_lines(results)
        + variant_calling_lines(results)
        + corpus_metric_lines(results)
    )
