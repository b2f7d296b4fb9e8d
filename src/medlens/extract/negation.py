"""Negation in yes/no questions and in the clauses that answer them: the negation words, what
negates nothing ("not normal" is the term abnormal, "not absent" means present, "gram
negative" is a stain), and a question's own negation (in its first words: "Is there no …")."""

from __future__ import annotations

import re

NEGATED = re.compile(
    r"\b(?:no|not|without|none|neither|nor|never|absent|absence|negative|lacks?|lacking|"
    r"free\s+of|clear\s+of|rules?\s+out|ruled\s+out)\b|n['’]t\b",
    re.I,
)

NEGATED_PHRASE = re.compile(rf"(?:{NEGATED.pattern})\s+\w+", re.I)


def head(question: str) -> str:
    """The question's first five words, where its own negation stands ("Is there no …", "Is
    the liver not …"); a "no"/"without" later is inside what it asks about ("… with renal
    facies no neck?", "… positioned appropriately without tilting?")."""
    return " ".join(question.split()[:5])


_NOT_NORMAL = re.compile(r"\bnot\s+normal\b(?![\s-]+sized?\b|\s+in\s+size)", re.I)
""" "not normal" is read as the term *abnormal*: its "not" negates nothing else."""
_NOT_ABSENT = re.compile(r"\bnot\s+(?:be\s+)?absent\b", re.I)


_GRAM = re.compile(r"\bgram[\s-]*(negative|positive)\b", re.I)
"""A stain result named in a finding ("gram negative septicemia") negates nothing."""


def double_negations(clause: str) -> str:
    """ "not normal" is the term *abnormal* and "not absent" means present: neither "not"
    negates the clause; nor does "negative" in "gram negative"."""
    clause = _GRAM.sub(r"gram\1", clause)
    return _NOT_ABSENT.sub("present", _NOT_NORMAL.sub("abnormal", clause))
