"""Specs read back from a run's own files (run.json, recorded exemplars), and the loader card
of the benchmark a run recorded.

The one place below the command line and the API where spec text is parsed: what a run recorded
was text when it was written, and comes back as a :class:`~medlens.core.specs.Spec` here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from medlens.core.specs import Spec, parse_spec
from medlens.sources.cards import loader_card


def stored_spec(text: str) -> Spec:
    """The spec a run's file recorded as text (SpecError when it no longer parses)."""
    return parse_spec(text)


def run_card(run: Mapping[str, Any]) -> dict[str, str] | None:
    """The card of the source a run's benchmark came from (None when it cannot be told)."""
    spec_text = run.get("spec", {}).get("benchmark", {}).get("spec", "")
    try:
        return loader_card(stored_spec(str(spec_text)).name)
    except Exception:  # an old or hand-edited run.json: the report still renders
        return None
