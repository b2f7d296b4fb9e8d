"""The run view: its fast paths (pyarrow columns, the record index) give exactly what the store's
exact reading gives, on hostile records — integers beyond 64 bits, NaN and the text "NaN",
non-ASCII text, escapes, U+2028, bare words only pyarrow reads, damaged and repeated lines, and
the torn last line of a killed run."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.runs.columns import FLOAT, STR, Columns, Kind, exact_columns, fast_columns
from medlens.runs.files import canonical_bytes
from medlens.runs.judgements import JudgeStore, judgement_columns
from medlens.runs.reading import read_records
from medlens.runs.store import RunStore
from medlens.runs.view import RunView

ITEMS = [
    Item(id=str(i), question=f"Q{i}", kind="choice", options={"A": "a", "B": "b"}, answer="A")
    for i in range(6)
]
SPEC = {"benchmark": {"content_hash": "abc"}, "model": "random?seed=0", "prompt": "medlens"}
FIELDS: dict[str, Kind] = {
    "score": FLOAT,
    "output": STR,
    "served_model": STR,
    "usage.completion_tokens": FLOAT,
    "extraction.answer": STR,
}
LONG = 123456789012345678901234
"""A 24-digit integer: pyarrow's float differs from Python's ``float(LONG)`` in the last digit."""


def record(item_id: str, **fields: Any) -> dict[str, Any]:
    return {"id": item_id, "output": "A", "error": None, "score": 1.0, **fields}


HOSTILE = [
    record("0", usage={"completion_tokens": LONG}, extraction={"answer": "A"}),
    record("1", score=float("nan"), output="NaN", served_model="NaN"),
    record("2", output="Ünïcödé — 病 \u2028 line\u2029 sep", served_model="m\u2028"),
    record("3", output='quote " backslash \\ tab \t newline \n nul \x00 \x1f', score=0.0),
    record("4", output="Impression:Infarct, [Inf] :-NaN? Infinity", score=-0.0),
    record("5", output="\ud800 lone", score=1e-5, usage={"completion_tokens": 12}),
    record('q"uo\\te\u2028', output=None, score=None, error={"type": "timeout", "message": "x"}),
]


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    store = RunStore.open_or_create(path, SPEC, ITEMS)
    store.close()
    (path / "records.jsonl").write_bytes(b"".join(lines))
    return path


def canonical(values: list[dict[str, Any]]) -> list[bytes]:
    """Lines as medlens writes them; a lone surrogate (which it cannot write raw) as an escape."""
    return [_line(value) + b"\n" for value in values]


def _line(value: dict[str, Any]) -> bytes:
    try:
        return canonical_bytes(value)
    except UnicodeEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()


def same_columns(a: Columns, b: Columns) -> None:
    assert a.keys == b.keys
    assert a.strings == b.strings
    assert a.floats.keys() == b.floats.keys()
    for name in a.floats:
        assert np.array_equal(a.floats[name].present, b.floats[name].present), name
        assert np.array_equal(a.floats[name].values, b.floats[name].values, equal_nan=True), name
        signs = np.signbit(a.floats[name].values) == np.signbit(b.floats[name].values)
        assert signs.all(), name  # -0.0 stays -0.0


def check_every_path(run: Path, fast: bool | None = None) -> dict[str, Any]:
    """Every reading of the run's records equals the store's; returns the records."""
    exact = RunStore.open(run).records()
    view = RunView(run)
    assert view.records() == exact or _nan_equal(view.records(), exact)
    columns = RunView(run).record_columns(FIELDS)
    same_columns(columns, exact_columns(exact.values(), "id", FIELDS))
    if fast is not None:
        assert columns.fast is fast
    index = RunView(run).record_index()
    for item_id, value in exact.items():
        assert _nan_equal({item_id: index[item_id]}, {item_id: value})
        assert item_id in index
    assert "absent" not in index and index.get("absent") is None
    assert _nan_equal(dict(RunView(run).record_index()), exact)
    assert list(RunView(run).record_index()) == list(exact)
    return exact


def _nan_equal(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def test_hostile_records_read_alike_every_way(tmp_path: Path) -> None:
    run = write_lines(tmp_path / "r", canonical(HOSTILE))
    records = check_every_path(run)
    assert records["0"]["usage"]["completion_tokens"] == LONG  # an int, never a float
    assert type(RunView(run).record_index()["0"]["usage"]["completion_tokens"]) is int
    assert math.isnan(records["1"]["score"]) and records["1"]["output"] == "NaN"
    columns = RunView(run).record_columns(FIELDS)
    assert columns.floats["usage.completion_tokens"].values[0] == float(LONG)
    assert columns.strings["output"][2] == HOSTILE[2]["output"]


def test_clean_hostile_text_takes_the_fast_path(tmp_path: Path) -> None:
    """Without a long integer, a lone surrogate or text that looks like a bare ``Inf`` or
    ``-NaN`` (read the exact way, to be safe) pyarrow reads the file, and equals the store."""
    kept = [r for r in HOSTILE if r["id"] not in ("0", "4", "5")]
    run = write_lines(tmp_path / "r", canonical(kept))
    check_every_path(run, fast=True)


@pytest.mark.parametrize(
    "tail",
    [b'{"id":"x","score":1.0}', b'{"id":"x","sco', b'{"id":"1","score":0.0}', b"  "],
)
def test_a_torn_last_line_is_dropped_every_way(tmp_path: Path, tail: bytes) -> None:
    """A killed write leaves text after the last newline, whole JSON or not: every path drops it
    (pyarrow alone would read a whole one as a record)."""
    run = write_lines(tmp_path / "r", [*canonical(HOSTILE[1:5]), tail])
    records = check_every_path(run, fast=False)
    assert "x" not in records and records["1"]["output"] == "NaN"
    assert any("torn last line" in line for line in RunView(run).damaged)


@pytest.mark.parametrize(
    "line",
    [
        b'{"id":"x","score":Inf}',
        b'{"id":"x","score": -Inf}',
        b'{"id":"x","score":-NaN}',
        b'{"id":"x"} {"id":"y"}',
        b"\xef\xbb\xbf" + b'{"id":"x"}',
        b'{"id":"x","score":"0.5"}',
        b'{"id":"x","score":true}',
        b'{"id":"x","id":"y"}',
        b'{"id":7}',
        b"[1,2]",
        b'{"id":"x","score":1e400}',
        b'{"id":"x","served_model":5}',
        b'{"id":"x","usage":{"completion_tokens":"3"}}',
        b'{"id":"x","extraction":[1]}',
        b"",
        b"   ",
        b'{"id":"1","score":0.5}',  # item 1 again: the later answer wins
        b'{"id":"1","error":{"type":"timeout","message":"m"},"score":null}',  # an answer stays
    ],
)
def test_lines_pyarrow_reads_otherwise_fall_back(tmp_path: Path, line: bytes) -> None:
    run = write_lines(tmp_path / "r", [*canonical(HOSTILE[1:5]), line + b"\n"])
    check_every_path(run, fast=False)


def test_a_long_integer_alone_is_read_the_exact_way(tmp_path: Path) -> None:
    """pyarrow reads 123456789012345678901234 as 1.2345678901234569e+23, Python's float() of
    the integer is 1.2345678901234568e+23: the columns take Python's."""
    run = write_lines(tmp_path / "r", canonical([record("0", usage={"completion_tokens": LONG})]))
    columns = check_every_path(run, fast=False) and RunView(run).record_columns(FIELDS)
    assert columns.floats["usage.completion_tokens"].values[0] == float(LONG)


def test_two_objects_on_a_line_beside_a_blank_one_fall_back(tmp_path: Path) -> None:
    """As many rows as lines, yet one line is two objects (damaged) and one is blank."""
    lines = [*canonical(HOSTILE[1:3]), b'{"id":"x"} {"id":"y"}\n', b"  \n"]
    run = write_lines(tmp_path / "r", lines)
    records = check_every_path(run, fast=False)
    assert "x" not in records and "y" not in records


def test_damaged_middle_line_is_no_record_in_the_index(tmp_path: Path) -> None:
    lines = canonical(HOSTILE[1:5])
    lines[1] = lines[1][:-5] + b"\n"  # cut inside the line, the id still findable
    run = write_lines(tmp_path / "r", lines)
    records = check_every_path(run, fast=False)
    assert "2" not in records and "2" not in RunView(run).record_index()


def random_text(rng: random.Random) -> str:
    alphabet = 'aZ09 ":,[]{}\\/\n\t\x00\x7f\u00e9\u2028\u2029\U0001f600NaNInf-'
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 12)))


def random_number(rng: random.Random) -> Any:
    pick = rng.randrange(8)
    if pick == 0:
        return rng.randrange(-(10**30), 10**30)
    if pick == 1:
        return rng.randrange(-(2**63), 2**63)
    if pick == 2:
        return float("nan")
    if pick == 3:
        return rng.choice([0.0, -0.0, 1e-300, 5e-324, 1.7976931348623157e308])
    if pick == 4:
        return struct_float(rng)
    if pick == 5:
        return None
    if pick == 6:
        return random_text(rng)
    return rng.uniform(-1e6, 1e6)


def struct_float(rng: random.Random) -> float:
    import struct

    value = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    return 0.5 if math.isinf(value) else value


def test_fuzzed_records_read_alike_every_way(tmp_path: Path) -> None:
    rng = random.Random(46)
    for round_ in range(40):
        values = []
        for i in range(rng.randrange(1, 30)):
            values.append(
                {
                    "id": f"{i}-{random_text(rng)}",
                    "score": random_number(rng),
                    "output": random_text(rng) if rng.random() < 0.8 else random_number(rng),
                    "usage": {"completion_tokens": random_number(rng)},
                    "extraction": {"answer": random_text(rng)} if rng.random() < 0.7 else None,
                }
            )
        run = write_lines(tmp_path / f"r{round_}", canonical(values))
        check_every_path(run)


def typed_number(rng: random.Random) -> Any:
    """A number of the kind records hold (no text, no integer beyond 18 digits), or null."""
    pick = rng.randrange(5)
    if pick == 0:
        return rng.randrange(-(10**18) + 1, 10**18)
    if pick == 1:
        return float("nan") if rng.random() < 0.3 else None
    if pick == 2:
        return rng.choice([0.0, -0.0, 1e-300, 5e-324, 1.7976931348623157e308, 1e16, 1e-5])
    if pick == 3:
        return struct_float(rng)
    return rng.uniform(-1.0, 1.0)


def test_fuzzed_typed_records_take_the_fast_path_and_agree(tmp_path: Path) -> None:
    """Fields of the asked types with hostile values: pyarrow reads most files, always alike."""
    rng = random.Random(2028)
    fast = 0
    for round_ in range(40):
        values = [
            {
                "id": f"{i}-{random_text(rng)}".replace("\ud800", ""),
                "score": typed_number(rng),
                "output": random_text(rng).replace("Inf", "In f").replace("-NaN", "- NaN"),
                "usage": {"completion_tokens": typed_number(rng)},
                "extraction": {"answer": random_text(rng)} if rng.random() < 0.7 else None,
            }
            for i in range(rng.randrange(1, 30))
        ]
        run = write_lines(tmp_path / f"r{round_}", canonical(values))
        check_every_path(run)
        fast += RunView(run).record_columns(FIELDS).fast
    assert fast >= 30


def test_judgement_columns_equal_the_store(tmp_path: Path) -> None:
    folder = tmp_path / "judges" / "j"
    store = JudgeStore.open_or_create(folder, {"name": "j", "protocol": {"name": "rubric"}})
    lines = [
        {"id": "a", "repeat": 0, "status": "ok", "score": 0.75, "by": "judge",
         "verdict": {"scores": {"consistency": 8}}},
        {"id": "b\u2028", "repeat": 0, "status": "unparseable", "score": None, "by": "judge",
         "failure": "unparseable", "verdict": None},
        {"id": "c", "repeat": 0, "status": "ok", "score": float("nan"), "by": "rule"},
    ]  # fmt: skip
    for line in lines:
        store.append(line)
    store.close()
    fields: dict[str, Kind] = {
        "status": STR,
        "score": FLOAT,
        "by": STR,
        "verdict.scores.consistency": FLOAT,
    }
    found = judgement_columns(folder, fields)
    assert found is not None and found.fast
    exact = exact_columns(JudgeStore.open(folder).lines().values(), "id", fields)
    same_columns(Columns(found.keys, found.strings, {k: v for k, v in found.floats.items()
                         if k != "repeat"}, False), exact)  # fmt: skip
    with open(folder / "judgements.jsonl", "ab") as handle:  # a line without its repeat
        handle.write(b'{"id":"d","status":"ok","score":1.0}\n')
    assert judgement_columns(folder, fields) is None


def test_fast_columns_refuse_what_they_cannot_prove(tmp_path: Path) -> None:
    clean = b'{"id":"a","score":0.5}\n'
    assert fast_columns(clean, "id", {"score": FLOAT}) is not None
    for whole in (
        b"",
        clean[:-1],
        clean + b"\n",
        clean + clean,
        clean + b'{"id":"b","score":12345678901234567890}\n',
        clean + b'{"id":"b","note":"x","score":Inf}\n',
    ):
        assert fast_columns(whole, "id", {"score": FLOAT}) is None, whole
    assert fast_columns(clean + b'{"id":"b","note":"Infarct:Infinity"}\n', "id", {"score": FLOAT})


def test_view_reads_items_and_run_like_the_store(tmp_path: Path) -> None:
    run = write_lines(tmp_path / "r", canonical(HOSTILE))
    view, store = RunView(run), RunStore.open(run)
    assert view.items() == store.items()
    assert view.spec == SPEC and view.run == store.run and view.extract == "medlens"
    raw = view.raw_items()
    assert [Item.from_json(value) for value in raw.values()] == store.items()
    assert _nan_equal(view.records(), read_records(run).latest)
    assert view.items_sha256() == RunView(run).items_sha256() != ""
    assert view.being_written() is None
