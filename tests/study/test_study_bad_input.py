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
    (
        replace("concurrency = 4", 'concurrency = 4, training_cutoff = "2024"'),
        4,
        "models.first.training_cutoff",
        "not a month YYYY-MM",
    ),
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
    # issue 49: a board's by, where and allow_partial checked when the file is read
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nby = ["colour"]'),
        14,
        "boards[1].by",
        "unknown axis 'colour'",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nwhere = "modality=XR-nope"'),
        14,
        "boards[1].where",
        "none has modality='XR-nope'",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nwhere = "colour=red"'),
        14,
        "boards[1].where",
        "colour",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nallow_partial = "yes"'),
        14,
        "boards[1].allow_partial",
        "expected true or false",
    ),
    # issue 30: a judge key without effect, a score naming no judge, a layout the benchmark
    # cannot fill, and a judge that is one of the evaluated models
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\njudge = "eq"'),
        14,
        "boards[1].judge",
        "has no effect: a board's judge scores the judged columns of its layout",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nscore = "combined:other"'),
        14,
        "boards[1].score",
        "'other' is not a judge of benchmark 'demo' (its judges: eq)",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nscore = "judged"'),
        14,
        "boards[1].score",
        "use rules, judge:NAME or combined:NAME",
    ),
    (
        replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\nlayout = "medcmr"'),
        14,
        "boards[1].layout",
        "layout medcmr needs the axes dimension, which benchmark 'demo' lacks",
    ),
    (
        replace(
            'first = { spec = "first", concurrency = 4 }',
            'first = { spec = "openai:Qwen/qwen2-vl?base_url=http://127.0.0.1:9/v1", concurrency = 4 }',
        ).replace(
            'spec = "replay:judge.jsonl"', 'spec = "openai:qwen2-vl?base_url=http://127.0.0.1:8/v1"'
        ),
        8,
        "judges.eq.spec",
        "names 'qwen2-vl', the model this run evaluates (model 'first'): a model judging its own answers",
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


def test_a_board_scored_by_a_judge_of_its_benchmark_is_accepted(tmp_path: Path) -> None:
    from medlens.study.file import load_study

    path = tmp_path / "s.toml"
    for score in ("combined:eq", "judge:eq"):
        path.write_text(
            replace('pairs = ["rand:first"]', f'pairs = ["rand:first"]\nscore = "{score}"'),
            encoding="utf-8",
        )
        board = load_study(path).boards[0]
        assert board.score == score and board.score_judge == "eq"
    path.write_text(replace('pairs = ["rand:first"]', 'pairs = ["rand:first"]\njudge = "eq"\nscore = "combined:eq"'),
                    encoding="utf-8")  # fmt: skip
    assert load_study(path).boards[0].judge == "eq"  # the judge names the score's judge: in effect
