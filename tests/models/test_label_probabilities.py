"""Labels that share a start get probabilities from the whole answer (issue 23): BI-RADS 1–5
and the three pileup genotypes, told apart only after their common prefix, each get a
probability, and the classification AUROC built on them equals scikit-learn's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.extract.normalise import normalize_answer
from medlens.models.option_logprobs import label_probabilities, option_probabilities_along
from medlens.scoring.corpus_stats import known_labels, probability_matrix, weighted_auroc

BIRADS = [f"BI-RADS {n}" for n in range(1, 6)]
GENOTYPES = ["homozygous reference", "heterozygous", "homozygous alternate"]


def _log(**probabilities: float) -> dict[str, float]:
    return {token.replace("_", " "): math.log(p) for token, p in probabilities.items()}


def birads_answer(digit: int, spread: dict[int, float]) -> list[tuple[str, dict[str, float]]]:
    """ "BI-RADS <digit>" as tokens BI, -R, ADS, " ", digit; `spread` gives the digit's rivals."""
    rivals = {str(d): math.log(p) for d, p in spread.items()}
    return [("BI", {"BI": 0.0}), ("-R", {"-R": 0.0}), ("ADS", {"ADS": 0.0}), (" ", {" ": 0.0}),
            (str(digit), rivals)]  # fmt: skip


def test_birads_digits_decide_after_the_common_prefix() -> None:
    positions = birads_answer(4, {4: 0.6, 3: 0.25, 5: 0.1, 2: 0.05})
    found = label_probabilities(BIRADS, positions)
    assert found == pytest.approx(
        {"BI-RADS 4": 0.6, "BI-RADS 3": 0.25, "BI-RADS 5": 0.1, "BI-RADS 2": 0.05}
    )


def test_every_genotype_gets_a_probability() -> None:
    """ "homozygous alternate": "het" branches off at the first token, "reference" later."""
    positions = [
        ("hom", _log(hom=0.7, het=0.3)),
        ("ozygous", _log(ozygous=1.0)),
        (" alternate", _log(_alternate=0.8, _reference=0.2)),
    ]
    found = label_probabilities(GENOTYPES, positions)
    assert found == pytest.approx(
        {"heterozygous": 0.3, "homozygous alternate": 0.7 * 0.8, "homozygous reference": 0.7 * 0.2}
    )


def test_a_branch_that_fits_several_labels_shares_its_mass() -> None:
    """ "heterozygous" answered: the rival first token "hom" fits both homozygous genotypes."""
    positions = [("het", _log(het=0.6, hom=0.4)), ("erozygous", _log(erozygous=1.0))]
    found = label_probabilities(GENOTYPES, positions)
    assert found == pytest.approx(
        {"heterozygous": 0.6, "homozygous reference": 0.2, "homozygous alternate": 0.2}
    )


def test_no_label_named_gives_no_probabilities() -> None:
    assert label_probabilities(GENOTYPES, [("hom", _log(hom=1.0))]) is None
    # a rival "BI" fits all five labels: shared mass alone says nothing
    assert label_probabilities(BIRADS, [("The", _log(The=0.9, BI=0.1))]) is None
    assert label_probabilities(BIRADS, [("The", _log(The=1.0))]) is None


def test_options_are_still_read_at_the_first_token() -> None:
    item = Item("o", "q", "classify", options={"A": "benign", "B": "malignant"}, answer="A")
    positions = [("\n", {"\n": 0.0}), ("B", _log(B=0.7, A=0.3))]
    assert option_probabilities_along(item, positions) == pytest.approx({"B": 0.7, "A": 0.3})


def _records(
    rng: np.random.Generator, labels: list[str], gold: list[str]
) -> list[dict[str, object]]:
    """Per item: a BI-RADS answer whose digit distribution leans to the gold."""
    records = []
    for truth in gold:
        weights = rng.dirichlet(np.ones(len(labels)))
        weights[labels.index(truth)] += rng.uniform(0, 1.5)
        weights /= weights.sum()
        spread = {int(label[-1]): float(w) for label, w in zip(labels, weights, strict=True)}
        said = max(spread, key=lambda d: spread[d])
        found = label_probabilities(labels, birads_answer(said, spread))
        records.append({"option_probs": found})
    return records


def test_birads_auroc_equals_sklearn() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    gold = [BIRADS[i] for i in rng.integers(0, 5, 200)]
    items = [
        Item(f"m{i}", "BI-RADS?", "classify", answer=g, meta={"labels": "|".join(BIRADS)})
        for i, g in enumerate(gold)
    ]
    records = _records(rng, BIRADS, gold)
    labels = known_labels(items)
    matrix = probability_matrix(items, records, labels)  # type: ignore[arg-type]
    assert matrix is not None and matrix.shape == (200, 5)
    truth = np.array([labels.index(normalize_answer(g)) for g in gold])
    ours = weighted_auroc(matrix, truth, np.ones((1, 200)), np.arange(200))[0]
    expected = roc_auc_score(truth, matrix, multi_class="ovr", average="macro")
    assert ours == pytest.approx(expected)
