"""The notations of option values read by one parser family (``core.notation``): every spelling
users write keeps reading as before, and every error is one ``OPTION 'TEXT': problem`` line."""

from __future__ import annotations

import re

import pytest

from medlens.analysis.cost import parse_price
from medlens.analysis.score_source import parse_score_source
from medlens.board.pairs import parse_pairs
from medlens.core.errors import SpecError
from medlens.core.model_info import parse_model_info
from medlens.core.notation import bad, bounded_number, distinct_list, settings, split_list, tagged
from medlens.execution.selection import parse_stratify
from medlens.execution.strategies import parse_strategy
from medlens.judges.protocols import parse_weights
from medlens.ratings.attribution import parse_categories

ONE_STYLE = re.compile(r"^--[a-z-]+ '.*': \S")


@pytest.mark.parametrize(
    ("text", "expected"),
    [("a,b", ["a", "b"]), (" a , b ,, ", ["a", "b"]), ("", []), (None, []), (",", [])],
)
def test_lists(text: str | None, expected: list[str]) -> None:
    assert split_list(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("judge:x", ("judge", "x", True)), ("rules", ("rules", "", False)),
     (" mlflow : file:/tmp/x ", ("mlflow", "file:/tmp/x", True)), (":x", ("", "x", True))],
)  # fmt: skip
def test_tagged_values(text: str, expected: tuple[str, str, bool]) -> None:
    assert tagged(text) == expected


def test_settings_and_numbers() -> None:
    assert settings("a=1, b = 2", "--x", "K=V") == [("a", "1"), ("b", "2")]
    for text in ("a", "=1", "c=1"):
        with pytest.raises(SpecError, match=r"^--x '.*': expected K=V \(got"):
            settings(text, "--x", "K=V", keys={"a", "b"})
    assert bounded_number("2.5", "--x", "t", "a", low=0, high=10) == 2.5
    for raw in ("nan", "inf", "-1", "x"):
        with pytest.raises(SpecError, match=r"^--x 't': a="):
            bounded_number(raw, "--x", "t", "a", low=0)
    with pytest.raises(SpecError, match="at most 10"):
        bounded_number("11", "--x", "t", "a", high=10)
    with pytest.raises(SpecError, match="lists a name twice"):
        distinct_list("a,b,a", "--x", "name")


SPELLINGS = [
    (parse_price, "input=2.5,output=10", (2.5, 10.0)),
    (parse_price, " output = 1 , input=0 ", (0.0, 1.0)),
    (parse_weights, "consistency=1,coherence=0.5", {"consistency": 1.0, "coherence": 0.5}),
    (parse_weights, "", {}),
    (parse_model_info, "cutoff=2024-06", {"training_cutoff": "2024-06"}),
    (parse_stratify, "task, department", ("task", "department")),
    (parse_categories, "a,b", ("a", "b")),
    (parse_score_source, "combined:eq", ("combined", "eq")),
    (parse_score_source, "rules", ("rules", None)),
    (parse_strategy, "few-shot:3+cot", (3, True)),
]


@pytest.mark.parametrize(("parse", "text", "expected"), SPELLINGS)
def test_existing_spellings_read_as_before(parse: object, text: str, expected: object) -> None:
    found = parse(text)  # type: ignore[operator]
    if parse is parse_price:
        found = (found.input, found.output)
    elif parse is parse_score_source:
        found = (found.kind, found.judge)
    elif parse is parse_strategy:
        found = (found.few_shot, found.cot)
    assert found == expected


def test_pairs_read_as_before() -> None:
    assert parse_pairs("a:b, c:d", ["a", "b", "c", "d"]) == [("a", "b"), ("c", "d")]


ERRORS = [
    (parse_price, "in=1,output=1"),
    (parse_price, "input=-1,output=1"),
    (parse_price, "input=1"),
    (parse_weights, "coherence"),
    (parse_weights, "coherence=abc"),
    (parse_model_info, "cutoff=June"),
    (parse_model_info, "size=7b"),
    (parse_categories, ","),
    (parse_categories, "a,a"),
    (parse_score_source, "jury"),
    (parse_strategy, "few-shot:3+few-shot:2"),
    (lambda text: parse_pairs(text, ["a", "b"]), "a"),
    (lambda text: parse_pairs(text, ["a", "b"]), "a:z"),
    (lambda text: parse_pairs(text, ["a", "b"]), "a:a"),
]


@pytest.mark.parametrize(("parse", "text"), ERRORS)
def test_every_error_is_one_line_in_one_style(parse: object, text: str) -> None:
    with pytest.raises(SpecError) as caught:
        parse(text)  # type: ignore[operator]
    message = str(caught.value)
    assert "\n" not in message and ONE_STYLE.match(message), message
    assert repr(text) in message


def test_the_error_names_option_and_text() -> None:
    assert str(bad("--by", "a,,b", "empty axis")) == "--by 'a,,b': empty axis"
