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

**Labels that share a start** (BI-RADS 1 … BI-RADS 5; "homozygous reference" / "homozygous
alternate") are told apart only further into the answer, so classification items without
options are read along the generated tokens (:func:`label_probabilities`): at each position
where the text so far still fits several labels, every alternative that fits exactly one of
them gives it P(path so far) × P(alternative); an alternative that still fits several (the
first token "hom" of both homozygous genotypes, off the generated path) shares its mass
equally among them; the label the generated text reaches takes the path's own probability.
No token that names exactly one label gives None, as above.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

from medlens.core.items import Item
from medlens.models.base import TokenAlternatives

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


def option_probabilities_along(
    item: Item, positions: Sequence[TokenAlternatives] | None
) -> dict[str, float] | None:
    """Probability per option key from the generated tokens' alternatives: labels of a
    classification item without options along the whole answer, everything else at the first
    token that says something."""
    if not positions:
        return None
    keys = option_keys(item)
    if item.kind == "classify" and not item.options:
        return label_probabilities(list(keys.values()), positions)
    return option_probabilities(item, answer_position(positions))


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()) + (" " if text[-1:].isspace() else "")


def label_probabilities(
    labels: Sequence[str], positions: Sequence[TokenAlternatives]
) -> dict[str, float] | None:
    """Probability per label along the generated tokens (see the module docstring); None when
    no token names one label (shared mass alone is no information)."""
    folded = {_folded(label).strip(): label for label in labels}
    decided: dict[str, float] = {}
    shared: dict[str, float] = {}
    prefix, carried = "", 1.0
    for token, alternatives in positions:
        if not prefix and _SKIP.match(token):
            continue
        live = [key for key in folded if key.startswith(prefix.strip())]
        if len(live) <= 1:
            break
        for candidate, logprob in alternatives.items():
            fits = _fitting(live, (prefix + candidate).lstrip()) if candidate != token else []
            into = decided if len(fits) == 1 else shared
            for key in fits:
                into[key] = into.get(key, 0.0) + carried * math.exp(logprob) / len(fits)
        carried *= math.exp(alternatives.get(token, 0.0))
        prefix = _folded((prefix + token).lstrip())
    reached = _fitting(list(folded), prefix) if prefix else []
    if len(reached) == 1:
        decided[reached[0]] = decided.get(reached[0], 0.0) + carried
    if not decided:
        return None
    return {folded[key]: decided.get(key, 0.0) + shared.get(key, 0.0) for key in decided | shared}


def _fitting(keys: Sequence[str], text: str) -> list[str]:
    """Labels `text` may still become, or has become (a full stop after it is fine)."""
    said = _folded(text)
    bare = said.strip()
    if not bare:
        return []
    return [
        key for key in keys if key.startswith(said) or bare.startswith(key) or key.startswith(bare)
    ]
