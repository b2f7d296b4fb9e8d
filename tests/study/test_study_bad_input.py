"""A bad study file, or a bad flag, is one line naming the file, the line and the key: exit 2,
no traceback, nothing started and nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from medlens.cli import app

BASE = """name = "s"
[models]
rand = "random"
first = { spec = "first", concurrency = 4 }
[benchmarks]
demo = { spec = "demo", limit = 5 }
[judges.eq]
spec = "replay:judge.jsonl"
protocol = "equivalence"
benchmarks = ["demo"]
[[boards]]
benchmark = "demo"
pairs = ["rand:first"]
"""


def study_args(tmp_path: Path, text: str, *extra: str) -> list[str]:
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return ["study", str(path), "--out", str(tmp_path / "studies"), *extra]


def replace(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new)


CASES = [
    # (file text, line, key, what the message says)
    (BASE.replace('name = "s"', 'name = "s"\ncolour = "red"'), 2, "colour", "unknown key"),
    (replace("concurrency = 4", "concurency = 4"), 4, "models.first.concurency", "unknown key"),
    (replace("limit = 5", "limt = 5"), 6, "benchmarks.demo.limt", "unknown key"),
    (
        replace('protocol = "equivalence"', 'protocol = "equivalence"\nscop = "all"'),
        10,
        "judges.eq.scop",
        "unknown key",
    ),
    (replace("pairs =", "pair ="), 13, "boards[1].pair", "unknown key"),
    (replace("first = {", "rand = {"), 4, "models.rand", "given twice"),
    (
        replace('benchmark = "demo"', 'benchmark = "gmai"'),
        12,
        "boards[1].benchmark",
        "'gmai' is not a benchmark of this study",
    ),
    (replace('name = "s"', 'name = "s"\nbudget = -5'), 2, "budget", "non-negative"),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:tuned"]'),
        13,
        "boards[1].pairs",
        "two different model labels",
    ),
    (
        replace('benchmarks = ["demo"]', 'benchmarks = ["vqarad"]'),
        10,
        "judges.eq.benchmarks",
        "'vqarad' is not a benchmark",
    ),
    (replace("rand = ", "r--x = "), 3, "models.r--x", "'--' joins model and benchmark"),
    (replace("limit = 5", "limit = 0"), 6, "benchmarks.demo.limit", "expected at least 1"),
    (replace("concurrency = 4", "concurrency = 0"), 4, "models.first.concurrency", "at least 1"),
    (replace('"random"', '"random?seed=1&seed=2"'), 3, "models.rand", "given more than once"),
    (
        replace('"random"', '"random?seed=x"'),
        3,
        "models.rand",
        "(run rand--demo): random: option seed",
    ),
    (
        replace('demo = { spec = "demo", limit = 5 }', "demo = { limit = 5 }"),
        6,
        "benchmarks.demo",
        "missing spec",
    ),
    (replace('"random"', '"nosuchbackend"'), 3, "models.rand", "nosuchbackend"),
    (replace('spec = "demo"', 'spec = "nosuchloader:x"'), 6, "benchmarks.demo", "nosuchloader"),
    (replace("limit = 5", 'limit = 5, where = "nosuchaxis=1"'), 6, "benchmarks.demo", "nosuchaxis"),
    (
        replace('protocol = "equivalence"', 'protocol = "nosuch"'),
        9,
        "judges.eq.protocol",
        "unknown judge protocol 'nosuch'",
    ),
    (
        replace('spec = "replay:judge.jsonl"', 'spec = "openai:judge"'),
        7,
        "judges.eq",
        "give the judge server's base_url",
    ),
    (replace("[models]", "[models"), 2, None, "not valid TOML"),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nlayout = "nope"'),
        14,
        "boards[1].layout",
        "unknown layout 'nope'",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\njudge = "other"'),
        14,
        "boards[1].judge",
        "'other' is not a judge of benchmark 'demo' (its judges: eq)",
    ),
]


@pytest.mark.parametrize(("text", "line", "key", "says"), CASES)
def test_a_bad_study_file_is_one_line_naming_file_line_and_key(
    tmp_path: Path, text: str, line: int, key: str | None, says: str
) -> None:
    result = CliRunner().invoke(app, study_args(tmp_path, text))
    assert result.exit_code == 2, result.output
    message = result.output.strip()
    assert message.count("\n") == 0 and "Traceback" not in message, message
    assert message.startswith(f"medlens: error: {tmp_path / 's.toml'}, line {line}"), message
    if key is not None:
        assert f", key {key}" in message, message
    assert says in message, message
    assert not (tmp_path / "studies").exists()


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (["--budget", "-1"], "--budget -1: expected a non-negative number"),
        (["--only", "rand,nosuch"], "--only nosuch: not a model of"),
        (["--executor", "dask"], "--executor 'dask'"),
        (["--order", "random"], "--order 'random'"),
        (["--max-error-rate", "2"], "--max-error-rate 2"),
        (["--concurrency", "0"], "--concurrency must be at least 1"),
    ],
)
def test_a_bad_flag_is_refused_before_anything_starts(
    tmp_path: Path, extra: list[str], says: str
) -> None:
    result = CliRunner().invoke(app, study_args(tmp_path, BASE, *extra))
    assert result.exit_code == 2, result.output
    assert says in result.output and result.output.strip().count("\n") == 0, result.output
    assert not (tmp_path / "studies").exists()


def test_a_missing_or_unreadable_file_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["study", str(tmp_path / "none.toml")])
    assert result.exit_code == 2
    assert "none.toml: cannot read the study file" in result.output
    (tmp_path / "bad.toml").write_bytes(b'name = "\xff"\n')
    result = CliRunner().invoke(app, ["study", str(tmp_path / "bad.toml")])
    assert result.exit_code == 2 and "not UTF-8" in result.output


def test_a_budget_needs_the_price_of_every_paid_backend(tmp_path: Path) -> None:
    text = BASE.replace('"random"', '"openai:m?base_url=http://127.0.0.1:9/v1"')
    result = CliRunner().invoke(app, study_args(tmp_path, text, "--budget", "5"))
    assert result.exit_code == 2
    assert "line 3, key models.rand: a budget needs the price" in result.output
    assert not (tmp_path / "studies").exists()
