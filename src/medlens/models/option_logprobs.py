"""Per-option probabilities from a backend's token log-probabilities (for AUROC).

A backend that returns the top-K alternatives of each generated token (OpenAI-compatible
``logprobs=true&top_logprobs=K``, Hugging Face generation scores) gives, at the answer token,
a distribution over what the model could have written. medlens reads it at the first
generated token that is not whitespace or punctuation, so the prompt must make the answer come
first (the ``medlens`` prompts ask for the letter or label itself; "Answer: B" puts "Answer"
first and gives no probabilities).

A candidate token maps to an option key when, stripped and case-folded, it is an option letter
(choice, classify with options), ``yes``/``no``/``maybe`` (yes/no items), or the start of
exactly one label (classify: "ben" → "benign"); candidates naming the same key add up, the rest
is dropped. No candidate maps → None (no probabilities rather than a made-up row).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from medlens.core.items import Item

_SKIP = re.compile(r"^[\s\W_]*$")


def answer_position(
    positions: Sequence[tuple[str, Mapping[str, float]]],
) -> Mapping[str, float] | None:
    """The top alternatives (token → log-probability) at the first token that says something."""
    for token, alternatives in positions:
        if not _SKIP.match(token):
            return alternatives
    return None


def option_keys(item: Item) -> dict[str, str]:
    """Case-folded candidate text → the option key it names."""
    if item.kind == "yes_no" and not item.options:
        return {word: word for word in ("yes", "no", "maybe")}
    if item.options:
        return {letter.casefold(): letter for letter in item.options}
    labels = [label.strip() for label in item.meta.get("labels", "").split("|") if label.strip()]
    return {label.casefold(): label for label in labels}


def option_probabilities(
    item: Item, alternatives: Mapping[str, float] | None
) -> dict[str, float] | None:
    """Probability per option key from the answer token's alternatives (log-probabilities)."""
    if not alternatives:
        return None
    keys = option_keys(item)
    prefix_match = not item.options and item.kind == "classify"
    found: dict[str, float] = {}
    for token, logprob in alternatives.items():
        key = _key_of(token.strip().casefold(), keys, prefix_match)
        if key is not None:
            found[key] = found.get(key, 0.0) + math.exp(logprob)
    return found or None


def _key_of(text: str, keys: Mapping[str, str], prefix_match: bool) -> str | None:
    if not text:
        return None
    if text in keys:
        return keys[text]
    if not prefix_match:
        return None
    starts = [key for candidate, key in keys.items() if candidate.startswith(text)]
    return starts[0] if len(starts) == 1 else None


def positions_from_openai(content: Iterable[object]) -> list[tuple[str, dict[str, float]]]:
    """``choices[0].logprobs.content`` → [(token, {alternative: logprob})] (malformed: [])."""
    out: list[tuple[str, dict[str, float]]] = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            return []
        alternatives = {
            str(alt["token"]): float(alt["logprob"])
            for alt in entry.get("top_logprobs") or []
            if isinstance(alt, dict) and "token" in alt and "logprob" in alt
        }
        alternatives.setdefault(entry["token"], float(entry.get("logprob", 0.0)))
        out.append((entry["token"], alternatives))
    return out
