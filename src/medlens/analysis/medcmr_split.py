"""Med-CMR's two numbers kept apart in a run's results (issue 30): MCQ accuracy over the choice
items, and the open answers' score from a rubric judge — never one average of MCQ accuracy with
rule-scored open answers, which is no number Med-CMR reports. Without a rubric judge the open
cell is the rules' exact-match score, labelled as such."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medlens.analysis.score_table import ScoreTable, cell
from medlens.core.items import Item

NOTE = (
    "Med-CMR reports MCQ accuracy and the judged open-answer score apart; the overall above "
    "pools MCQ answers with open answers scored by {what}"
)


def is_medcmr(spec: Mapping[str, Any], items: Sequence[Item]) -> bool:
    """A Med-CMR run: its loader, or items of Med-CMR's shape (dimensions, choice and open)."""
    if str((spec.get("benchmark") or {}).get("name")) == "medcmr":
        return True
    kinds = {item.kind for item in items}
    return {"choice", "open"} <= kinds and any("dimension" in item.meta for item in items)


def medcmr_split(
    spec: Mapping[str, Any], items: Sequence[Item], table: ScoreTable,
    judges: Mapping[str, Any], source: str,
) -> dict[str, Any] | None:  # fmt: skip
    """``{"mcq", "open", "open_source", "note"}``, or None for another benchmark."""
    if not is_medcmr(spec, items):
        return None
    kind_of = {item.id: item.kind for item in items}
    kinds = np.array([kind_of.get(i, "") for i in table.ids], dtype=object)
    mcq = cell(table, kinds == "choice")
    rubric = next((name for name, entry in judges.items()
                   if entry.get("protocol", {}).get("name") not in ("equivalence", "choice", "mmbu")), None)  # fmt: skip
    if source != "rules" or rubric is None:
        what = "the rules (exact match)" if source == "rules" else source
        opened = {
            k: v for k, v in cell(table, kinds == "open").items() if k in ("n", "score", "ci")
        }
        return {"mcq": _short(mcq), "open": opened, "open_source": what,
                "note": NOTE.format(what=what) if source == "rules" else None}  # fmt: skip
    judged = judges[rubric]["overall"]
    return {"mcq": _short(mcq), "open": {"n": judged.get("n"), "score": judged.get("score"),
            "ci": judged.get("ci")}, "open_source": f"judge {rubric} (rubric)",
            "note": NOTE.format(what="the rules (exact match)")}  # fmt: skip


def _short(found: Mapping[str, Any]) -> dict[str, Any]:
    return {k: found.get(k) for k in ("n", "score", "ci")}


def medcmr_lines(results: Mapping[str, Any]) -> list[str]:
    """The two lines a report prints for a Med-CMR run (none for another benchmark)."""
    split = results.get("medcmr")
    if not split:
        return []

    def shown(c: Mapping[str, Any]) -> str:
        if c.get("score") is None:
            return "– (no item)"
        ci = c.get("ci")
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        return f"{c['score']:.3f}{interval} (n={c['n']})"

    lines = [f"Med-CMR MCQ accuracy: {shown(split['mcq'])}",
             f"Med-CMR open answers, {split['open_source']}: {shown(split['open'])}"]  # fmt: skip
    return lines + ([f"note: {split['note']}"] if split.get("note") else [])
