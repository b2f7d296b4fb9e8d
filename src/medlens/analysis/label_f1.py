"""``medlens chexpert RUN``: the CheXpert-label F1s of a report-generation run under a chosen
labeller and uncertain-label policy, each with n and its cluster-bootstrap CI.

results.json carries the same metrics from the rule-based labeller under U-zeros; this command
recomputes them under ``--uncertain positive|ignore`` or with a learned labeller
(``models.chexbert``), and adds the per-finding F1s behind the macro means. Only chest-radiograph
reports count (``scoring.chexpert.is_chest_report``), as in every report.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import numpy as np

from medlens.core.errors import InputError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.view import RunView
from medlens.scoring.chexpert import FINDINGS, chexpert_labels, is_chest_report
from medlens.scoring.corpus_metrics import corpus_cells
from medlens.scoring.corpus_stats import add_label_f1_rows
from medlens.scoring.kind_rows import KindRows
from medlens.scoring.label_f1 import check_policy, label_stats
from medlens.scoring.report_text import report_text

RULE_LABELLER = "rule-based (medlens's keyword labeller, an approximation of CheXbert)"
POLICY_NAMES = {"negative": "U-zeros", "positive": "U-ones", "ignore": "left out"}


class Labeller(Protocol):
    name: str

    def labels(self, texts: list[str]) -> list[dict[str, int]]: ...


class RuleLabeller:
    """medlens's rule-based labeller behind the :class:`Labeller` shape."""

    name = RULE_LABELLER

    def labels(self, texts: list[str]) -> list[dict[str, int]]:
        return [chexpert_labels(text) for text in texts]


def chest_reports(store: RunView) -> tuple[list[Item], list[Record]]:
    """The scored chest-radiograph report items of the run and their records."""
    records = store.records()
    items, kept = [], []
    for item in store.items():
        record = records.get(item.id)
        if not is_chest_report(item) or item.answer is None or record is None:
            continue
        if record.get("error") is None and record.get("score") is not None:
            items.append(item)
            kept.append(record)
    return items, kept


def label_f1_result(run: Path, uncertain: str, labeller: Labeller | None = None) -> dict[str, Any]:
    """The label F1s of `run` (see the module docstring) as one JSON-ready object."""
    policy = check_policy(uncertain)
    store = RunView(run)
    items, records = chest_reports(store)
    if not items:
        raise InputError(run, None, "no scored chest-radiograph report items (MIMIC-CXR, "
                         "IU-Xray or a chest X-ray modality) to label")  # fmt: skip
    used = labeller or RuleLabeller()
    predicted = used.labels([report_text(_answer(r)) for r in records])
    gold = used.labels([report_text(str(item.answer)) for item in items])
    rows = KindRows(items=items, records=records)
    add_label_f1_rows(rows, predicted, gold, np.ones(len(items), bool), policy, used.name)
    return {
        "run": store.path.name,
        "labeller": used.name,
        "uncertain": policy,
        "n": len(items),
        "metrics": corpus_cells(rows),
        "per_finding": per_finding(predicted, gold, policy),
    }


def per_finding(
    predicted: list[dict[str, int]], gold: list[dict[str, int]], uncertain: str
) -> dict[str, dict[str, Any]]:
    """Finding → F1 (None when neither side names it), reference and predicted positives."""
    tp, fp, fn = np.split(label_stats(predicted, gold, FINDINGS, uncertain).sum(axis=0), 3)
    out = {}
    for index, finding in enumerate(FINDINGS):
        denominator = 2 * tp[index] + fp[index] + fn[index]
        out[finding] = {
            "f1": float(2 * tp[index] / denominator) if denominator else None,
            "reference_positive": int(tp[index] + fn[index]),
            "predicted_positive": int(tp[index] + fp[index]),
        }
    return out


def label_f1_lines(result: dict[str, Any]) -> list[str]:
    """What the command prints: the labeller and policy, each metric, the per-finding F1s."""
    policy = result["uncertain"]
    lines = [
        f"{result['run']}: CheXpert-label F1 of {result['n']} chest-radiograph reports; "
        f"labeller: {result['labeller']}; uncertain labels: {policy} "
        f"({POLICY_NAMES[policy]})"
    ]
    for name, cell in result["metrics"].items():
        value = "–" if cell["value"] is None else f"{cell['value']:.3f}"
        ci = f" [{cell['ci'][0]:.3f}, {cell['ci'][1]:.3f}]" if cell["ci"] else ""
        lines.append(f"  {name} {value}{ci} (n={cell['n']}, images={cell['images']})")
    lines.append("  per finding (F1; reference / predicted positives):")
    for finding, row in result["per_finding"].items():
        f1 = "–" if row["f1"] is None else f"{row['f1']:.3f}"
        lines.append(
            f"    {finding}: {f1} ({row['reference_positive']} / {row['predicted_positive']})"
        )
    return lines


def _answer(record: Record) -> str:
    answer = (record.get("extraction") or {}).get("answer")
    return "" if answer is None else str(answer)
