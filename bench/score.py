"""Benchmark: extraction (both modes), scoring and bootstrap CIs for 26,000 GMAI-like items.

    .venv/bin/python bench/score.py [--items 26000] [--seed 0]

Prints the time of each phase. Target: scoring + all CIs under 2 s on the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np

from medlens.core.items import Item
from medlens.extract import Extraction, extract
from medlens.scoring.item_scores import item_scores, score
from medlens.stats.bootstrap import group_cis

AXES = {"task": 18, "department": 18, "modality": 38, "granularity": 4}
TERMS = [
    "Normal", "Diabetic retinopathy", "Drusen", "Glaucoma", "Pneumonia", "Pleural effusion",
    "Pneumothorax", "Cardiomegaly", "Adenocarcinoma", "Squamous cell carcinoma", "Melanoma",
    "Basal cell carcinoma", "CT", "MRI", "X-ray", "Ultrasound", "Liver", "Kidney", "Spleen",
    "Brain", "Hemorrhage", "Infarct", "Fracture", "Nodule", "Cyst",
]  # fmt: skip


def make_items(n: int, rng: np.random.Generator) -> list[Item]:
    """GMAI-like items: 4–5 options, ~5% multi-answer, 1–4 questions per image."""
    images = np.repeat(np.arange(n), rng.integers(1, 5, n))[:n]
    items = []
    for i in range(n):
        k = 5 if rng.random() < 0.3 else 4
        texts = rng.choice(TERMS, size=k, replace=False)
        options = {chr(65 + j): str(t) for j, t in enumerate(texts)}
        multi = rng.random() < 0.05
        letters = sorted(rng.choice(list(options), size=2, replace=False)) if multi else None
        answer = "".join(letters) if letters else chr(65 + int(rng.integers(k)))
        meta = {axis: f"{axis}-{int(rng.integers(size))}" for axis, size in AXES.items()}
        meta["image_id"] = f"img{images[i]}"
        kind = "multi_choice" if multi else "choice"
        items.append(Item(str(i), "Which is shown?", kind, options, answer, meta=meta))
    return items


OutputForm = Callable[[Item, str, np.random.Generator], str]
FORMS: list[tuple[float, OutputForm]] = [
    (0.35, lambda it, a, r: a),
    (0.12, lambda it, a, r: f"{a[0]}. {it.options[a[0]]}"),
    (0.08, lambda it, a, r: f"The answer is {a[0]}."),
    (0.05, lambda it, a, r: f"Final answer: \\boxed{{{a}}}"),
    (0.05, lambda it, a, r: f'```json\n{{"answer": "{a}"}}\n```'),
    (0.03, lambda it, a, r: f"答案是{a}"),
    (0.04, lambda it, a, r: a.lower()),
    (0.04, lambda it, a, r: it.options[a[0]]),
    (0.03, lambda it, a, r: f"<answer>{a}</answer>"),
    (
        0.12,
        lambda it, a, r: (
            "Let's analyze the image step by step. The findings include irregular margins and "
            "heterogeneous enhancement, which we compare with each option in turn. "
            + " ".join(
                f"Option {k} ({v}) is less consistent." for k, v in it.options.items() if k != a[0]
            )
            + f"\nTherefore, the answer is {a[0]}."
        ),
    ),
    (0.03, lambda it, a, r: "I cannot provide medical advice. Please consult a radiologist."),
    (0.03, lambda it, a, r: f"It could be {'A'} or {'B'}."),
    (0.03, lambda it, a, r: f"It is not {it.options['A']}; it is {it.options[a[0]]}."),
]


def make_outputs(items: list[Item], rng: np.random.Generator) -> list[str]:
    """One realistic output per item; 60% of answers are right, the rest a random option."""
    weights = np.array([w for w, _ in FORMS])
    picks = rng.choice(len(FORMS), size=len(items), p=weights / weights.sum())
    outputs = []
    for item, pick in zip(items, picks, strict=True):
        right = rng.random() < 0.6
        answer = str(item.answer) if right else str(rng.choice(list(item.options)))
        outputs.append(FORMS[pick][1](item, answer, rng))
    return outputs


@contextmanager
def phase(name: str, timings: dict[str, float]) -> Iterator[None]:
    start = time.perf_counter()
    yield
    timings[name] = time.perf_counter() - start
    print(f"{name:<34} {timings[name]:7.3f} s")


def aggregate(items: list[Item], scores: np.ndarray, compat: np.ndarray) -> dict[str, object]:
    """Overall and every single-axis breakdown: n, mean, 95% CI clustered by image_id."""
    image_ids = np.array([item.meta["image_id"] for item in items], dtype=object)
    clusters = np.unique(image_ids, return_inverse=True)[
        1
    ]  # codes once, not a string sort per axis
    lo, hi = group_cis(scores, np.zeros(scores.size, dtype=np.intp), clusters)
    out: dict[str, object] = {"overall": (scores.mean(), lo[0], hi[0])}
    for axis in AXES:
        labels = np.array([item.meta[axis] for item in items], dtype=object)
        names, codes = np.unique(labels, return_inverse=True)
        lo, hi = group_cis(scores, codes, clusters)
        n = np.bincount(codes)
        means = np.bincount(codes, weights=scores) / n
        compat_means = np.bincount(codes, weights=compat) / n
        out[axis] = list(zip(names, n, means, lo, hi, compat_means, strict=True))
    return out


def results_json_aggregates(
    items: list[Item],
    medlens: list[Extraction],
    vlmeval: list[Extraction],
    scores: np.ndarray,
    compat: np.ndarray,
) -> dict[str, object]:
    """What `medlens run`/`report` compute from the records: every rate, both CIs, all axes."""
    from medlens.analysis.results import breakdown_axes, by_axis
    from medlens.analysis.score_table import cell, score_table

    records = {
        item.id: {
            "id": item.id,
            "error": None,
            "extraction": ours.to_json(),
            "score": float(value),
            "vlmeval": {**theirs.to_json(), "score": float(other)},
        }
        for item, ours, theirs, value, other in zip(
            items, medlens, vlmeval, scores, compat, strict=True
        )
    }
    table = score_table(items, records)
    overall = cell(table, np.ones(len(table.ids), dtype=bool))
    return {"overall": overall, "by": by_axis(table, breakdown_axes(table))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=26_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    timings: dict[str, float] = {}
    with phase(f"generate {args.items:,} items + outputs", timings):
        items = make_items(args.items, rng)
        outputs = make_outputs(items, rng)
    with phase("extract (medlens rules)", timings):
        medlens = [
            extract(item, text, "medlens") for item, text in zip(items, outputs, strict=True)
        ]
    with phase("extract (vlmeval rules)", timings):
        vlmeval = [
            extract(item, text, "vlmeval") for item, text in zip(items, outputs, strict=True)
        ]
    with phase("score + item_scores (both modes)", timings):
        scores, compat = _score_all(items, medlens, vlmeval)
    with phase("overall + 4 axes, clustered CIs", timings):
        table = aggregate(items, scores, compat)
    with phase("results.json aggregation (real path)", timings):
        results_json_aggregates(items, medlens, vlmeval, scores, compat)
    _report(table, medlens, scores, compat, timings)
    print("\nfor comparison (not part of the target):")
    continuous = np.random.default_rng(1).random(len(items))  # ROUGE-like: many distinct values
    with phase("  same CIs, continuous scores", timings):
        aggregate(items, continuous, compat)
    with phase("  same CIs, one group_cis call per cell", timings):
        _per_cell(items, scores)


def _per_cell(items: list[Item], scores: np.ndarray) -> None:
    """What a caller looping over cells pays: one group_cis call per axis value."""
    clusters = np.unique([item.meta["image_id"] for item in items], return_inverse=True)[1]
    for axis in AXES:
        labels = np.array([item.meta[axis] for item in items], dtype=object)
        for name in np.unique(labels):
            mask = labels == name
            group_cis(scores[mask], np.zeros(int(mask.sum()), dtype=np.intp), clusters[mask])


def _score_all(
    items: list[Item], medlens: list[Extraction], vlmeval: list[Extraction]
) -> tuple[np.ndarray, np.ndarray]:
    main_scores = np.array([score(it, ex) for it, ex in zip(items, medlens, strict=True)], float)
    compat = np.array([score(it, ex) for it, ex in zip(items, vlmeval, strict=True)], float)
    for item, extraction in zip(items, medlens, strict=True):
        item_scores(item, extraction)
    return main_scores, compat


def _report(
    table: dict[str, object],
    medlens: list[Extraction],
    scores: np.ndarray,
    compat: np.ndarray,
    timings: dict[str, float],
) -> None:
    overall = table["overall"]
    assert isinstance(overall, tuple)
    statuses = {
        s: sum(e.status == s for e in medlens) / len(medlens) for s in ("unparsed", "refused")
    }
    print(f"\noverall medlens {overall[0]:.4f} [{overall[1]:.4f}, {overall[2]:.4f}]")
    print(
        f"overall vlmeval {compat.mean():.4f}  (extraction sensitivity {scores.mean() - compat.mean():+.4f})"
    )
    print(f"unparsed {statuses['unparsed']:.3%}  refused {statuses['refused']:.3%}")
    for axis in AXES:
        cells = table[axis]
        assert isinstance(cells, list)
        print(f"{axis:<12} {len(cells)} values, e.g. {cells[0][0]}: n={cells[0][1]} "
              f"{cells[0][2]:.3f} [{cells[0][3]:.3f}, {cells[0][4]:.3f}]")  # fmt: skip
    total = timings["score + item_scores (both modes)"] + timings["overall + 4 axes, clustered CIs"]
    print(f"\nscoring + CIs: {total:.3f} s (target < 2 s)")
    extraction = timings["extract (medlens rules)"] + timings["extract (vlmeval rules)"]
    print(f"extraction + scoring + CIs: {total + extraction:.3f} s")
    real = (
        timings["score + item_scores (both modes)"]
        + timings["results.json aggregation (real path)"]
    )
    print(
        f"extraction + scoring + results.json aggregation: {real + extraction:.3f} s (target < 2 s)"
    )


if __name__ == "__main__":
    main()
