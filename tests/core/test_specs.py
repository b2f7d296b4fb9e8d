from __future__ import annotations

import pytest

from medlens.core.errors import SpecError
from medlens.core.registry import Registry
from medlens.core.specs import Spec, check_options, int_option, parse_spec


@pytest.mark.parametrize(
    ("text", "name", "argument", "options"),
    [
        ("demo", "demo", "", {}),
        ("gmai:data/VAL.tsv", "gmai", "data/VAL.tsv", {}),
        (
            "slake:data/slake?split=test&lang=en",
            "slake",
            "data/slake",
            {"split": "test", "lang": "en"},
        ),
        (
            "openai:gpt-4o?base_url=http://127.0.0.1:8000/v1&api_key_env=KEY",
            "openai",
            "gpt-4o",
            {"base_url": "http://127.0.0.1:8000/v1", "api_key_env": "KEY"},
        ),
        ("replay:/tmp/a b.xlsx", "replay", "/tmp/a b.xlsx", {}),
    ],
)
def test_parse_spec(text: str, name: str, argument: str, options: dict[str, str]) -> None:
    spec = parse_spec(text)
    assert (spec.name, spec.argument, spec.options) == (name, argument, options)


def test_canonical_sorts_options() -> None:
    assert parse_spec("x:y?b=2&a=1").canonical() == "x:y?a=1&b=2"


@pytest.mark.parametrize("text", ["", ":path", "x:y?=&&=="])
def test_bad_specs(text: str) -> None:
    with pytest.raises(SpecError):
        parse_spec(text)


def test_unknown_option_names_known_ones() -> None:
    with pytest.raises(SpecError, match=r"unknown option\(s\) colour \(known: seed\)"):
        check_options(Spec("random", "", {"colour": "red"}), {"seed"})


def test_int_option_rejects_text() -> None:
    with pytest.raises(SpecError, match="seed='x' is not a whole number"):
        int_option(Spec("random", "", {"seed": "x"}), "seed", 0)
    assert int_option(Spec("random", "", {"seed": "7"}), "seed", 0) == 7


def test_registry_did_you_mean() -> None:
    registry: Registry[object] = Registry("model")
    registry.add("oracle", "medlens.models.baselines:make_oracle", "oracle", "gold")
    with pytest.raises(SpecError, match="did you mean 'oracle'"):
        registry.get("oracel")
    assert callable(registry.get("oracle"))
