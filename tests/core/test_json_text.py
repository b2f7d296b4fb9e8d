"""``standard_json`` writes what ``json.dumps(..., ensure_ascii=False)`` writes, byte for byte,
on real items (items.jsonl lines and content-hash lines) and on fuzzed values."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest

from data_paths import items_of, realdata_dir
from medlens.core import json_text
from medlens.core.items import _identity, nulls_of
from medlens.core.json_text import standard_json

TEXTS = (
    "", "a", "Drusen", ":", ",", '"', '":', ",\"", "\\", "\\\"", "{", "}", "[", "]", "null",
    "1.5", "1e5", "\n", "\t", "\x00", "\x1f", "\x7f", "\u2028", "\u2029", "é", "答案是B", "😀",
    "\ud800", ", ", ": ",
)  # fmt: skip
NUMBERS: tuple[Any, ...] = (
    0, 1, -7, 2**63 - 1, 2**64, -(2**70), 0.5, 1.0, 1e16, 1e-5, 123456.789, math.nan, math.inf,
    True, False, None,
)  # fmt: skip


def fuzzed(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth < 3 and roll < 0.3:
        keys = [rng.choice(TEXTS) + rng.choice(TEXTS) for _ in range(rng.randint(0, 5))]
        return {key: fuzzed(rng, depth + 1) for key in keys}
    if depth < 3 and roll < 0.45:
        return [fuzzed(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if roll < 0.8:
        return "".join(rng.choice(TEXTS) for _ in range(rng.randint(0, 4)))
    return rng.choice(NUMBERS)


def nones(value: Any) -> int:
    if isinstance(value, dict):
        return sum(map(nones, value.values()))
    if isinstance(value, list):
        return sum(map(nones, value))
    return value is None


def standard(value: Any, sort_keys: bool) -> bytes | None:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode("utf-8")
    except (UnicodeEncodeError, TypeError):
        return None


@pytest.mark.parametrize("sort_keys", [False, True])
def test_fuzzed_values_are_written_as_the_standard_encoder_writes_them(sort_keys: bool) -> None:
    rng = random.Random(int(sort_keys))
    for _ in range(4000):
        value = fuzzed(rng)
        expected = standard(value, sort_keys)
        if expected is None:  # refused by both (a lone surrogate cannot be UTF-8)
            with pytest.raises((UnicodeEncodeError, TypeError)):
                standard_json(value, sort_keys=sort_keys, nulls=nones(value))
            continue
        assert standard_json(value, sort_keys=sort_keys, nulls=nones(value)) == expected, value


@pytest.mark.parametrize("spec", ["vqa-rad", "slake", "pathvqa", "pubmedqa", "medqa"])
def test_real_items_are_written_as_the_standard_encoder_writes_them(spec: str) -> None:
    folder = {"vqa-rad": "vqa_rad"}.get(spec, spec)
    items = items_of(f"{spec}:{realdata_dir(folder)}")[:3000]
    fast = 0
    for item in items:
        for value, sort_keys in ((item.to_json(), False), (_identity(item), True)):
            expected = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys).encode()
            assert standard_json(value, sort_keys=sort_keys, nulls=nulls_of(item)) == expected
            fast += b"\\" not in expected
    # orjson's path is taken, so both encoders are compared (lines with an escape — SLAKE's
    # organ boxes as JSON text, PathVQA's Windows paths, PubMedQA's line breaks — are not)
    assert fast > len(items) or spec in ("slake", "pathvqa", "pubmedqa")


def test_a_nan_where_a_none_was_expected_is_left_to_the_standard_encoder() -> None:
    value = {"answer": None, "meta": {"score": math.nan}}
    assert standard_json(value, nulls=1) == json.dumps(value, ensure_ascii=False).encode()
    assert json_text._FLOAT.search(b"1e16") and not json_text._FLOAT.search(b":true,")
