"""The record write path: orjson lines byte for byte what the standard json module writes, batched
appends (one write per batch), and kill safety with batches: a SIGKILL loses at most the batch
in flight, the torn-line repair holds, and a resumed run records every item exactly once."""

from __future__ import annotations

import json
import math
import os
import random
import signal
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from benchfiles import write_jsonl_benchmark
from medlens.runs.files import (
    _LONG_NUMBER,
    JsonLines,
    canonical_bytes,
    canonical_json,
    has_long_digit_run,
    loads_line,
)
from medlens.runs.store import RECORD_BATCH, RunStore


def standard(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode()


def random_floats(rng: random.Random, n: int) -> list[float]:
    values = []
    for _ in range(n):
        exponent = rng.randint(-30, 30)
        values += [rng.random() * 10.0**exponent, round(rng.random() * 10.0**exponent, 6)]
        bits = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(bits):
            values.append(bits)
    return values


EDGE_VALUES: list[Any] = [
    1e-05, 5e-06, 1e-4, 9.999e-05, 1e16, 9999999999999998.0, 1e22, 1e300, 5e-324, -0.0, 0.0,
    -1e-7, 123456789012345.6, 2**63 - 1, -(2**63), 2**64, 2**70,
    float("nan"), float("inf"), -float("inf"), {"score": float("nan")}, [1.0, float("inf")],
    "", "é中😀\u2028\u2029", "\x00\x01\x1f\x7f", 'quote " and backslash \\ and "1e-5"',
    {"b": 1, "a": {"d": [1e-9, "x"], "c": None}}, {"é": 1, "e": 2, "z": 3, "É": 4},
    {1: "int key"}, (1e-5, [2e20]), [[[1e-9]]], {"t": (1, 2)}, True, False, None,
]  # fmt: skip


@pytest.mark.parametrize("value", EDGE_VALUES, ids=repr)
def test_edge_values_encode_as_the_standard_encoder_does(value: Any) -> None:
    assert canonical_bytes(value) == standard(value)
    assert canonical_bytes(value).decode() == canonical_json(value)


def test_random_floats_and_records_encode_as_the_standard_encoder_does() -> None:
    rng = random.Random(5)
    floats = random_floats(rng, 20_000)
    assert [canonical_bytes(v) for v in floats] == [standard(v) for v in floats]
    for _ in range(5_000):
        record = {
            "id": str(rng.randrange(10**6)), "latency": rng.choice(floats), "score": rng.random(),
            "usage": {"prompt_tokens": rng.randrange(10**4)}, "error": None, "cached": False,
            "output": "".join(rng.choice('ab "\\1e-5.\n中') for _ in range(rng.randrange(30))),
            "scores": {"jaccard": rng.choice(floats)}, "option_probs": {"A": rng.random() / 1e6},
        }  # fmt: skip
        assert canonical_bytes(record) == standard(record)


def test_keys_known_to_hold_no_float_skip_the_walk_and_encode_alike() -> None:
    """The fingerprint's fast path (its messages are strings) against the standard encoder."""
    rng = random.Random(7)
    floats = random_floats(rng, 300)
    texts = ["", "é中😀\u2028", "\x00\x1f\x7f", 'q " \\ "1e-5"', "Options:\nA. x\n"]
    for number in range(300):
        params = {"temperature": floats[number], "top_p": rng.choice([1e-05, 0.5, 1e16, 3])}
        if number % 7 == 0:
            params["nan"] = float("nan")  # the standard encoder's NaN, through the fallback
        payload = {
            "model": rng.choice(texts),
            "messages": [["user", [rng.choice(texts), {"image": "ab" * 32}]]],
            "params": params,
        }
        assert canonical_bytes(payload, float_free=("model", "messages")) == standard(payload)
    listed = [1e-05, "x"]  # not a dict: walked whole, whatever is named
    assert canonical_bytes(listed, float_free=("model",)) == standard(listed)


def test_a_fingerprint_is_the_sha256_of_the_standard_encoding() -> None:
    import hashlib

    from medlens.execution.requests import fingerprint
    from medlens.models.base import ImagePart, Message, TextPart

    messages = [
        Message("user", (ImagePart(data=b"", sha256="d" * 64, name="0"), TextPart("é 1e-5 \x01"))),
        Message("assistant", (TextPart("B"),)),
    ]
    params = {"temperature": 1e-05, "max_tokens": 16, "stop": ["\n"], "top_p": 1e16}
    payload = {
        "model": "openai:m?base_url=x",
        "messages": [["user", [{"image": "d" * 64}, "é 1e-5 \x01"]], ["assistant", ["B"]]],
        "params": params,
    }
    expected = hashlib.sha256(standard(payload)).hexdigest()
    assert fingerprint("openai:m?base_url=x", messages, params) == expected


def test_the_whole_file_digit_run_check_agrees_with_its_regex() -> None:
    rng = random.Random(11)
    alphabet = b"0123456789" * 4 + b' ."e-+:,{}[]\n\xc3\xa9\x00'
    for _ in range(4000):
        size = rng.randint(0, 80)
        data = bytes(rng.choice(alphabet) for _ in range(size))
        if rng.random() < 0.3:  # runs of 17–21 digits at random places
            cut = rng.randint(0, size)
            run = "".join(rng.choice("0123456789") for _ in range(rng.randint(17, 21)))
            data = data[:cut] + run.encode() + data[cut:]
        assert has_long_digit_run(data) == (_LONG_NUMBER.search(data) is not None), data
    assert has_long_digit_run(b"9" * 19) and not has_long_digit_run(b"9" * 18 + b"a" + b"9" * 18)


def test_objects_the_standard_encoder_refuses_are_still_refused() -> None:
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: int

    for value in (Point(1), {"when": __import__("datetime").date(2024, 1, 1)}, "lone \ud800"):
        with pytest.raises((TypeError, UnicodeEncodeError)):
            canonical_bytes(value)


def test_lines_read_back_as_the_standard_parser_reads_them() -> None:
    rng = random.Random(9)
    for value in [*random_floats(rng, 2_000), *EDGE_VALUES[:-7]]:
        line = standard(value)
        got, want = loads_line(line), json.loads(line)
        assert got == want or (got != got and want != want)  # NaN
    assert (
        loads_line(b'{"big": 123456789012345678901234567890}')["big"]
        == 123456789012345678901234567890
    )
    assert loads_line(b"[1e400]") == [float("inf")]


def test_batched_appends_write_once_per_batch_and_on_flush(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    log = JsonLines(path, batch=3, interval=3600)
    for n in range(5):
        log.append({"n": n})
    assert path.read_bytes().count(b"\n") == 3  # one batch out, two waiting
    log.flush()
    assert [v.value["n"] for v in log.read().lines] == [0, 1, 2, 3, 4]
    log.append({"n": 5})
    log.close()
    assert path.read_bytes().count(b"\n") == 6


def test_a_slow_writer_writes_each_line_as_it_comes(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    log = JsonLines(path, batch=256, interval=0.0)
    log.append({"n": 0})
    assert path.read_bytes() == b'{"n":0}\n'
    log.close()


WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from medlens.runs.files import JsonLines
    log = JsonLines(Path(sys.argv[1]), batch=int(sys.argv[2]), interval=3600)
    n = 0
    while True:
        log.append({"id": str(n), "output": "x" * 200, "latency": 1e-05})
        n += 1
""")


def test_sigkill_loses_at_most_the_batch_in_flight(tmp_path: Path) -> None:
    path, batch = tmp_path / "records.jsonl", 64
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(batch)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not path.is_file() or path.stat().st_size < 200_000):
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    content = JsonLines(path).read()
    ids = [line.value["id"] for line in content.lines]
    assert ids == [str(n) for n in range(len(ids))]  # whole lines, in order, none missing
    assert len(ids) % batch == 0 or content.tail is not None  # only whole batches got out


def test_sigkill_of_a_fast_run_then_resume_records_every_item_once(tmp_path: Path) -> None:
    """A replay-speed run (thousands of records a second, written in batches) killed at random
    moments, then resumed: the final file holds every item once, as an uninterrupted run."""
    bench = write_jsonl_benchmark(tmp_path / "b", n_items=4000, seed=8)
    spec = ["--bench", f"jsonl:{bench}", "--model", "random?seed=2", "--no-cache"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}

    def medlens(name: str) -> subprocess.Popen[bytes]:
        command = [
            sys.executable,
            "-m",
            "medlens",
            "run",
            *spec,
            "--out",
            str(tmp_path),
            "--name",
            name,
        ]
        return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    reference = medlens("ref")
    assert reference.wait(timeout=300) == 0
    killed = tmp_path / "killed" / "records.jsonl"
    rng = random.Random(4)
    kills = 0
    for _ in range(3):
        proc = medlens("killed")
        wanted = rng.randrange(1, 3000)
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline:
            if killed.is_file() and killed.read_bytes().count(b"\n") >= wanted:
                break
            time.sleep(0.001)
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=60)
        lost = RunStore.open(tmp_path / "killed")
        assert all(r["error"] is None for r in lost.records().values())
    assert kills >= 1
    final = medlens("killed")
    assert final.wait(timeout=300) == 0
    got = [json.loads(line) for line in killed.read_text(encoding="utf-8").splitlines()]
    want = [
        json.loads(line) for line in (tmp_path / "ref" / "records.jsonl").read_text().splitlines()
    ]
    assert len(got) == len({r["id"] for r in got}) == 4000
    scores = {r["id"]: (r["output"], r["score"]) for r in got}
    assert scores == {r["id"]: (r["output"], r["score"]) for r in want}
    assert RECORD_BATCH > 1  # the runs above wrote in batches
