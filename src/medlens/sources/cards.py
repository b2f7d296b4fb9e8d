"""Licence, access, homepage and citation of every benchmark source (each loader's ``CARD``).

Every loader module under ``medlens.sources`` declares a module-level plain dict
``CARD = {"licence", "access", "homepage", "citation"}`` (optionally ``access_note``, printed
once when a run on a non-open source starts). A module serving several registry names may map
a loader function's name to its own card in ``CARDS``, which overrides ``CARD`` for that name.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

ACCESS_LEVELS = ("open", "registration", "credentialed", "mixed")
CARD_KEYS = ("licence", "access", "homepage", "citation")
USAGE_STATEMENT = (
    "These results come from an automated benchmark evaluation. They are for research and "
    "model evaluation only, are not a clinical validation and make no claim about safety or "
    "fitness for any clinical use. Use each dataset under its own licence and cite it."
)


def loader_card(name: str) -> dict[str, str]:
    """The card of the registry entry `name` (a copy); raises SpecError for an unknown name."""
    from medlens.core.errors import SpecError
    from medlens.sources import SOURCES

    entries = {entry.name: entry for entry in SOURCES}
    if name not in entries:
        SOURCES.get(name)  # raises the registry's did-you-mean error
    module_name, _, attr = entries[name].target.partition(":")
    module = importlib.import_module(module_name)
    overrides: Mapping[str, Any] = getattr(module, "CARDS", {})
    card = overrides.get(attr, getattr(module, "CARD", None))
    if not isinstance(card, Mapping):
        raise SpecError(f"benchmark source {name!r} ({module_name}) declares no CARD")
    return {key: str(value) for key, value in card.items()}


def card_problems(name: str, card: Mapping[str, str]) -> list[str]:
    """What is missing or malformed in one card (empty when it is complete)."""
    problems = [f"{name}: no {key!r}" for key in CARD_KEYS if key not in card]
    if card.get("access") not in ACCESS_LEVELS:
        problems.append(f"{name}: access {card.get('access')!r} not one of {ACCESS_LEVELS}")
    user_data = str(card.get("licence", "")).startswith("user data")
    if not user_data:
        if not str(card.get("homepage", "")).startswith("https://"):
            problems.append(f"{name}: homepage is not an https address")
        if not str(card.get("citation", "")).lstrip().startswith("@"):
            problems.append(f"{name}: citation is not a BibTeX entry")
    if not card.get("licence"):
        problems.append(f"{name}: empty licence")
    return problems


def benchmark_listing() -> list[dict[str, str]]:
    """One row per loader: name, spec, description, licence, access, citation, homepage."""
    from medlens.sources import SOURCES

    rows = []
    for entry in SOURCES:
        card = loader_card(entry.name)
        rows.append(
            {
                "name": entry.name,
                "spec": entry.syntax,
                "description": entry.summary,
                "licence": card["licence"],
                "access": card["access"],
                "citation": card["citation"],
                "homepage": card["homepage"],
                **_extra_listing(entry.name),
            }
        )
    return rows


def _extra_listing(name: str) -> dict[str, Any]:
    """``hfds`` lists its presets (name, repo ids, layout, parity with the native loader)."""
    if name != "hfds":
        return {}
    from medlens.sources.hfds_presets import PRESETS

    return {"presets": [
        {"name": p.name, "repos": list(p.repos), "layout": p.summary, "parity": p.parity,
         "native": p.native}
        for p in PRESETS.values()
    ]}  # fmt: skip


def access_note(card: Mapping[str, str]) -> str | None:
    """The line a run on a non-open source prints once when it starts (None for open sources)."""
    if card.get("access") == "open":
        return None
    note = card.get("access_note")
    if note:
        return f"access: {note}"
    if card.get("access") in ("registration", "credentialed"):
        return f"access: {card['access']} source — {card.get('licence', '')}"
    return None
