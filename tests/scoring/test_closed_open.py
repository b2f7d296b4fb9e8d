"""The one closed − open Δ (issue 35): paired by sample where the benchmark pairs its forms."""

from __future__ import annotations

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.scoring.closed_open import closed_open_delta, pair_key, pair_keys, pairing_text
from medlens.stats.paired import difference_ci, paired_ci


def mmbu_item(k: int, form: str, image: str) -> Item:
    meta = {"task": "classification", "template": "none", "answer_type": form, "image_id": image}
    return Item(
        id=f"{form}{k}", question="?", kind="open", options={}, answer=f"organ {k}", meta=meta
    )


def test_pairs_by_sample_and_uses_the_paired_interval() -> None:
    images = [f"img{k // 2}" for k in range(8)]
    items = [mmbu_item(k, form, images[k]) for form in ("closed", "open") for k in range(8)]
    closed = np.array([1, 1, 1, 0, 1, 1, 1, 0], float)
    opened = np.array([1, 0, 1, 0, 0, 1, 0, 0], float)
    extra = Item(id="x", question="?", kind="open", answer="spleen",
                 meta={"task": "classification", "template": "none", "answer_type": "open"})  # fmt: skip
    forms = np.array([i.meta["answer_type"] for i in [*items, extra]], dtype=object)
    clusters = np.array([*images, *images, "other"], dtype=object)
    gap = closed_open_delta(forms, pair_keys([*items, extra]), np.r_[closed, opened, 1.0], clusters)
    assert gap is not None and gap["paired"] and gap["n_pairs"] == 8 and gap["unpaired"] == 1
    assert gap["delta"] == pytest.approx((closed - opened).mean())
    assert gap["delta_ci"] == pytest.approx(list(paired_ci(opened, closed, np.array(images))))
    assert pairing_text(gap) == "8 pairs"


def test_every_pair_agreeing_is_not_a_zero_width_interval() -> None:
    items = [mmbu_item(k, form, f"img{k}") for form in ("closed", "open") for k in range(8)]
    forms = np.array([i.meta["answer_type"] for i in items], dtype=object)
    gap = closed_open_delta(
        forms, pair_keys(items), np.ones(16), np.array([f"img{k % 8}" for k in range(16)])
    )
    assert gap is not None and gap["delta"] == 0.0
    lo, hi = gap["delta_ci"]
    assert lo < -0.05 and hi > 0.05  # [0, 0] was printed before


def test_different_questions_are_unpaired_and_say_so() -> None:
    slake = [Item(id=f"q{k}", question="?", kind="open", answer="yes",
                  meta={"answer_type": "closed" if k < 6 else "open", "image_id": f"i{k % 4}"})
             for k in range(14)]  # fmt: skip
    assert pair_key(slake[0]) is None  # no sample_id, not MMBU-shaped: never paired by label
    scores = np.array([1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1], float)
    forms = np.array([i.meta["answer_type"] for i in slake], dtype=object)
    clusters = np.array([i.meta["image_id"] for i in slake], dtype=object)
    gap = closed_open_delta(forms, pair_keys(slake), scores, clusters)
    assert gap is not None and not gap["paired"] and gap["n_pairs"] == 0
    assert gap["n_closed"] == 6 and gap["n_open"] == 8
    expected = difference_ci(scores, forms == "closed", forms == "open", clusters.astype(str))
    assert expected is not None and gap["delta_ci"] == pytest.approx(list(expected))
    assert pairing_text(gap) == "unpaired: different questions"


def test_unscored_partners_leave_the_pairs() -> None:
    items = [mmbu_item(k, form, f"img{k}") for form in ("closed", "open") for k in range(4)]
    forms = np.array([i.meta["answer_type"] for i in items], dtype=object)
    scores = np.array([1, 1, 0, 1, 0, np.nan, 0, 1], float)  # open 1 has no verdict
    gap = closed_open_delta(
        forms, pair_keys(items), scores, np.array([f"img{k % 4}" for k in range(8)])
    )
    assert gap is not None and gap["n_pairs"] == 3 and gap["unpaired"] == 1
    assert gap["delta"] == pytest.approx(np.mean([1 - 0, 0 - 0, 1 - 1]))
