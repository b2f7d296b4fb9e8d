"""The protocol sections issue 15 adds to results.json, behind one call in ``results.py``.

- ``metrics``: per-kind corpus metrics with CIs (``corpus_metrics``), also in every slice cell;
- ``mmbu``: MMBU's micro-F1 per task and form with chance and the paired closed−open Δ
  (``mmbu_results``);
- ``variant_calling``: SNV/indel precision, recall, F1 of pileup genotype calls;
- ``single_multi``: how single- and multi-answer items were told apart (GMAI's
  ``question_type`` markers, the gold letters, or not at all on an unmarked TEST split), with
  the count and score of each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.scoring.corpus_metrics import attach_corpus_metrics
from medlens.sources.vlmeval import normalise_header

_SOURCE_NOTES = {
    "marker": "told apart by the question_type markers (* single, # multi)",
    "gold": "told apart by the gold answers (no question_type markers)",
    "none": (
        "no question_type markers and no answers: multi-answer items cannot be told apart "
        "and were all prompted and scored as single-answer"
    ),
}


def attach_protocol_sections(
    results: dict[str, Any], items: Sequence[Item], records: dict[str, Record]
) -> None:
    attach_corpus_metrics(results, items, records)
    bench = str(((results.get("spec") or {}).get("benchmark") or {}).get("spec", ""))
    if bench.startswith("mmbu:"):
        from medlens.scoring.mmbu import mmbu_section

        results["mmbu"] = mmbu_section(items, records)
    if bench.startswith("pileup:"):
        from medlens.scoring.variant_calling import variant_calling_section

        section = variant_calling_section(items, records)
        if section is not None:
            results["variant_calling"] = section
    if bench.startswith(MARKED_FAMILIES):
        summary = single_multi_summary(items, records)
        if summary is not None:
            results["single_multi"] = summary


MARKED_FAMILIES = ("gmai:", "vlmeval:")
"""Benchmarks whose loader honours GMAI's ``question_type`` markers (``sources/vlmeval.py``)."""


def answer_mode_source(items: Sequence[Item]) -> str:
    """``marker`` (a ``question_type`` column), ``gold`` (gold letters), or ``none`` (TEST)."""
    keys = {key for item in items for key in item.meta}  # each field name normalised once
    if any(normalise_header(key) == "questiontype" for key in keys):
        return "marker"
    return "gold" if any(item.answer is not None for item in items) else "none"


def single_multi_summary(
    items: Sequence[Item], records: dict[str, Record]
) -> dict[str, Any] | None:
    """Counts (and mean scores) of single- and multi-answer items, and how they were told
    apart; None for a benchmark without choice items."""
    choices = [item for item in items if item.kind in ("choice", "multi_choice")]
    if not choices:
        return None
    source = answer_mode_source(choices)
    out: dict[str, Any] = {"source": source, "note": _SOURCE_NOTES[source]}
    for name, kind in (("single", "choice"), ("multi", "multi_choice")):
        chosen = [item for item in choices if item.kind == kind]
        scores = [
            float(records[item.id]["score"])
            for item in chosen
            if item.id in records and records[item.id].get("score") is not None
        ]
        out[name] = {
            "n": len(chosen),
            "scored": len(scores),
            "score": sum(scores) / len(scores) if scores else None,
        }
    return out
