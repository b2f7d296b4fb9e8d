"""Every benchmark source declares licence, access, homepage and citation; `benchmarks --json`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from medlens.core.errors import SpecError
from medlens.sources import SOURCES
from medlens.sources.cards import ACCESS_LEVELS, access_note, card_problems, loader_card

ALL_SOURCES = [entry.name for entry in SOURCES]


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


@pytest.mark.parametrize("name", ALL_SOURCES)
def test_every_registered_source_has_a_complete_card(name: str) -> None:
    card = loader_card(name)
    assert card_problems(name, card) == []
    assert card["access"] in ACCESS_LEVELS
    if card["citation"]:
        entries = re.findall(r"^@(\w+)\{([\w:-]+),", card["citation"], flags=re.M)
        assert entries, card["citation"]
        assert all(kind in {"article", "inproceedings", "misc", "software"} for kind, _ in entries)
        assert _balanced(card["citation"])
        assert re.search(r"title\s*=\s*\{", card["citation"])


def test_card_problems_names_what_is_missing() -> None:
    problems = card_problems("x", {"licence": "MIT", "access": "public", "homepage": "http://a"})
    assert "x: no 'citation'" in problems
    assert any("access 'public'" in p for p in problems)
    assert any("homepage" in p for p in problems)


def test_gmai_and_vlmeval_share_a_module_but_not_a_card() -> None:
    gmai, vlmeval = loader_card("gmai"), loader_card("vlmeval")
    assert gmai["licence"] == "inherits the licences of its 284 source datasets; no single licence"
    assert "GMAI-MMBench" in gmai["citation"] and "2408.03361" in gmai["citation"]
    assert vlmeval["licence"].startswith("user data")


def test_known_licences() -> None:
    assert loader_card("vqa-rad")["licence"].startswith("CC0 1.0")
    assert loader_card("pubmedqa")["licence"].startswith("MIT")
    assert loader_card("slake")["licence"].startswith("CC BY 4.0")


def test_unknown_source_is_a_spec_error() -> None:
    with pytest.raises(SpecError, match="unknown benchmark 'slak'"):
        loader_card("slak")


def test_access_note_only_for_sources_that_are_not_open() -> None:
    assert access_note(loader_card("vqa-rad")) is None
    note = access_note(loader_card("gmai"))
    assert note is not None and "284 source datasets" in note
    assert access_note({"access": "credentialed", "licence": "PhysioNet credentialed"}) == (
        "access: credentialed source — PhysioNet credentialed"
    )


def test_benchmarks_json_lists_every_source_with_its_card() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "medlens", "benchmarks", "--json"],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    rows = json.loads(proc.stdout)
    assert [row["name"] for row in rows] == ALL_SOURCES
    for row in rows:
        assert {"name", "spec", "description", "licence", "access", "citation"} <= set(row)
        assert row["licence"] == loader_card(row["name"])["licence"]
