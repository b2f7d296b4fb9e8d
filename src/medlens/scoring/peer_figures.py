"""Each peer's own headline figures of a run read in its mode (``results["peer"]``), computed
from the peer's per-item verdicts, with n and the interval every medlens mean gets:

- lmms-eval (``tasks/slake/utils.py:131-229``): ``slake_accuracy`` and its open / closed,
  CT / MRI / X-ray and content-type breakdowns; ``medqa`` accuracy (``medqa.yaml:16-19``);
- EvalScope (``report/report.py:177-214``): the micro mean and each SLAKE subset
  ``{lang}_{open|closed}``;
- MedEvalKit (``SLAKE.py:171-177``, ``VQA_RAD.py:138-144``): total, open and closed accuracy
  (closed: SLAKE's answer_type; VQA-RAD/PathVQA: a yes/no gold);
- MultiMedEval (``task_families.py:219-238``): ``closedQuestionsAccuracy`` and
  ``openQuestionsAccuracy`` and **no overall** (closed iff the cleaned gold is yes/no); the
  QA sets' ``accuracy``.

medlens's overall score of such a run is the item mean of the same verdicts, labelled as
medlens's where the peer reports none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.extract.peers.common import is_open, raw_gold
from medlens.stats.bootstrap import group_cis

Grouping = Callable[[Item], list[str]]


def _slake_lmms(item: Item) -> list[str]:
    form = "open" if is_open(item) else "closed"
    names = ["slake_accuracy", f"slake_{form}_accuracy"]
    modality = item.meta.get("modality", "").lower().replace("x-ray", "xray")
    if modality in ("ct", "mri", "xray"):
        names.append(f"slake_{modality}_accuracy")
    content = item.meta.get("content_type", "").lower()
    return [*names, f"slake_{content}_accuracy"] if content else names


def _lmms_eval(item: Item) -> list[str]:
    return ["medqa"] if item.meta.get("source") == "medqa" else _slake_lmms(item)


def _evalscope(item: Item) -> list[str]:
    if item.meta.get("source") != "slake":
        return ["score"]
    lang = item.meta.get("q_lang") or item.meta.get("lang") or "en"
    return ["score", f"{lang}_{'open' if is_open(item) else 'closed'}"]


def _medevalkit(item: Item) -> list[str]:
    source = item.meta.get("source")
    if source in ("medqa", "medmcqa", "pubmedqa"):
        return ["acc"]
    if source == "slake":
        closed = not is_open(item)
    else:
        closed = raw_gold(item).lower().strip() in ("yes", "no")
    return ["total acc", "close acc" if closed else "open acc"]


def _multimedeval(item: Item) -> list[str]:
    from medlens.extract.peers.multimedeval import clean_str

    if item.meta.get("source") in ("medqa", "medmcqa", "pubmedqa"):
        return ["accuracy"]
    closed = clean_str(raw_gold(item).lower().strip()) in ("yes", "no")
    return ["closedQuestionsAccuracy" if closed else "openQuestionsAccuracy"]


GROUPINGS: dict[str, Grouping] = {
    "lmms-eval": _lmms_eval,
    "evalscope": _evalscope,
    "medevalkit": _medevalkit,
    "multimedeval": _multimedeval,
}


def peer_figures(
    mode: str, items: Sequence[Item], records: dict[str, Record]
) -> dict[str, Any] | None:
    """``{"mode", "figures": {name: {n, images, value, ci}}}`` for a run read in a peer mode."""
    grouping = GROUPINGS.get(mode)
    if grouping is None:
        return None
    values, labels, clusters = [], [], []
    for item in items:
        record = records.get(item.id)
        if record is None or record.get("error") is not None or record.get("score") is None:
            continue
        for name in grouping(item):
            values.append(float(record["score"]))
            labels.append(name)
            clusters.append(f"{name}\x00{item.meta.get('image_id', item.id)}")
    if not values:
        return None
    scores, groups = np.array(values), np.array(labels, dtype=object)
    lo, hi = group_cis(scores, groups, np.array(clusters, dtype=object))
    figures = {}
    for index, name in enumerate(np.unique(groups).tolist()):
        mask = groups == name
        images = {c.split("\x00", 1)[1] for c in np.array(clusters, dtype=object)[mask]}
        figures[name] = {
            "n": int(mask.sum()), "images": len(images), "value": float(scores[mask].mean()),
            "ci": [float(lo[index]), float(hi[index])],
        }  # fmt: skip
    return {"mode": mode, "figures": figures}
