"""Vocabulary concepts a text names (modality, plane, sex, body region, organ …), found by
looking its 1–4-word phrases up in the active vocabulary (``extract.vocabulary``)."""

from __future__ import annotations

import re

from medlens.extract.vocabulary import active_vocabulary

_ALTERNATIVE_AXES = ("modality", "plane", "body_region", "organ", "sex")
"""Axes whose values exclude each other: "a CT of the head" is not about the abdomen."""
_NGRAM_WORD = re.compile(r"[a-z0-9]+")


def concepts_in(text: str, axes: tuple[str, ...] = _ALTERNATIVE_AXES) -> frozenset[tuple[str, str]]:
    """(axis, canonical) of every vocabulary value of `axes` named in `text` (1–4-word
    phrases)."""
    vocabulary = active_vocabulary()
    words = [w for w in _NGRAM_WORD.findall(text.lower()) if w not in ("a", "an", "the")]
    firsts = vocabulary.first_words
    found = set()
    for start, word in enumerate(words):
        if word not in firsts:  # most words start no vocabulary term: one set lookup
            continue
        for width in (1, 2, 3, 4):
            concept = vocabulary.by_key.get(" ".join(words[start : start + width]))
            if concept is not None and concept[0] in axes:
                found.add(concept[:2])
    return frozenset(found)
