"""Contamination reporting: a model's training cutoff against the benchmark's release, whether
the run's exemplars came from the evaluated split, and sources scored near the ceiling.

- ``--model-info cutoff=YYYY-MM`` records the model's training cutoff in run.json (outside the
  spec: it describes the model, not the run). The protocol card states it beside the
  benchmark's first public release (:data:`RELEASES`, the month its paper or data first
  appeared) and notes when the cutoff is later: the benchmark, or the sources it was built
  from, may then be in the training data. It is a timeline, not evidence either way.
- The isolation statement says where the few-shot exemplars came from: none (zero-shot), another
  split of the benchmark, or the evaluated split itself (only an explicit ``--exemplars`` can do
  that; questions equal to an evaluated one are dropped in every case).
- A source (``meta["source"]``) scored ≥ :data:`CEILING` with n ≥ :data:`CEILING_MIN_N` is
  flagged in reports and boards: a score that high on a public source is what memorised items
  look like, and worth a look before it is read as skill (``oracle``, which answers from the
  gold, is never flagged).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from medlens.core.model_info import parse_model_info

__all__ = [
    "CEILING", "RELEASES", "cutoff_text", "isolation_text", "near_ceiling", "parse_model_info",
    "reads_gold",
]  # fmt: skip

CEILING = 0.98
CEILING_MIN_N = 50
RELEASES: dict[str, str] = {
    "gmai": "2024-08",  # arXiv 2408.03361
    "mmlu": "2020-09",  # arXiv 2009.03300
    "medqa": "2020-09",  # arXiv 2009.13081
    "medmcqa": "2022-03",  # arXiv 2203.14371
    "pubmedqa": "2019-09",  # arXiv 1909.06146
    "vqa-rad": "2018-11",  # Scientific Data 5, 180251
    "slake": "2021-02",  # arXiv 2102.09542
    "pathvqa": "2020-03",  # arXiv 2003.10286
    "mimic-cxr": "2019-01",  # arXiv 1901.07042
    "mmbu": "2026-06",  # arXiv 2606.06696
}
"""Loader name → month of the benchmark's first public release (its paper's first version)."""


def cutoff_text(run: Mapping[str, Any]) -> str:
    """The card's "training cutoff vs release" row."""
    bench = str(run["spec"]["benchmark"].get("name", ""))
    released = RELEASES.get(bench)
    cutoff = (run.get("model_info") or {}).get("training_cutoff")
    release_text = f"benchmark first released {released}" if released else (
        "benchmark release date not known to medlens")  # fmt: skip
    if cutoff is None:
        return f"model training cutoff not given (--model-info cutoff=YYYY-MM); {release_text}"
    text = f"model training cutoff {cutoff}; {release_text}"
    if released and cutoff > released:
        text += (
            ": the cutoff is later than the release, so the benchmark (or the sources it was "
            "built from) may be in the model's training data"
        )
    elif released:
        text += ": the cutoff is earlier than the release"
    return text


def isolation_text(spec: Mapping[str, Any]) -> str:
    """The card's isolation statement: where the run's exemplars came from."""
    chosen = (spec.get("strategy") or {}).get("exemplars")
    if not chosen:
        return "no exemplars shown (zero-shot): no solved item reached the model"
    bench = spec["benchmark"]
    evaluated = str(bench.get("split", ""))
    source = str(chosen.get("spec", ""))
    split = re.search(r"[?&]split=([^&]+)", source)
    same_file = source == str(bench.get("spec"))
    if same_file or (split is not None and split.group(1) == evaluated):
        return (
            f"exemplars came from the evaluated split {evaluated!r} ({source}); questions equal "
            "to an evaluated one were dropped, but the split is not isolated"
        )
    where = f"split {split.group(1)!r}" if split else source
    return (
        f"exemplars came from {where}, not the evaluated split {evaluated!r}; any exemplar whose "
        "question equals an evaluated one was dropped"
    )


GOLD_READERS = ("oracle",)
"""Baselines that answer from the gold: their ceiling is by construction, never flagged."""


def reads_gold(model_spec: str) -> bool:
    """Whether a run's model is a baseline that answers from the gold (``oracle``)."""
    return str(model_spec).split(":", 1)[0].split("?", 1)[0] in GOLD_READERS


def near_ceiling(cells: Mapping[str, Mapping[str, Any]], score_key: str = "score") -> list[str]:
    """Values of the source axis scored ≥ CEILING with n ≥ CEILING_MIN_N, as printed notes."""
    notes = []
    for value, cell in cells.items():
        score, n = cell.get(score_key), int(cell.get("n") or 0)
        if score is not None and n >= CEILING_MIN_N and float(score) >= CEILING:
            notes.append(
                f"source {value!r} scores {100 * float(score):.1f}% (n={n}): near the ceiling, "
                "as memorised items would; check it for contamination before reading it as skill"
            )
    return notes
