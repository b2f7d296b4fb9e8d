"""Option letters at the start of a line: a line that is only an option ("C) RNA editing"),
and an output whose last line is one after a line that is none (its closing answer). Shared by
the choice rules (``extract.choice``), and the line that opens an option-by-option review (the
cut rules' too)."""

from __future__ import annotations

import re
from collections.abc import Mapping

DELIMITED = re.compile(
    r"^(?:\s*$|[.):：,;!。，]|\s*[-–—]|\s*\n|\s*(?:选项|项|是|为|正确)"
    r"|\s+(?:because|since|as|given|due|is|was|would|seems|appears|fits|matches)\b)"
)
"""What may follow a letter that is an answer: punctuation, its option text (checked apart),
a reason ("D because …"), or nothing. "A 45-year-old", "A normal fundus" are English."""
LINE_REF = re.compile(
    r"^\s*(?:[-*•]\s*|\d+[.)]\s*)?(?:options?\s+|选项\s*)?[(\[]?([A-Za-z])[)\]]?"
    r"(?=[.):：]|\s*[-–—]|\s*$|\s+\S)(.*)$",
    re.I,
)


def closing_option_line(text: str, options: Mapping[str, str]) -> str | None:
    """A last line that is only an option ("Step 4: Answer the question.⏎C) RNA editing"),
    after a line that is none (the last of an echoed list is no answer) and announces no review
    ("Let's analyze each option.⏎A) Pneumonia" was cut at the review's first entry)."""
    lines = [line.strip() for line in text[-600:].splitlines() if line.strip()]
    if len(lines) < 2 or not is_bare_line(lines[-1], options):
        return None
    letter = line_letter(lines[-1], options)
    if letter is None or line_letter(lines[-2], options) is not None:
        return None
    return None if _ANNOUNCES_REVIEW.search(lines[-2]) else letter


_ANNOUNCES_REVIEW = re.compile(
    r"\b(?:analy[sz]|consider|evaluat|examin|review|go(?:ing)?\s+through|look(?:ing)?\s+at|"
    r"discuss|assess|weigh)\w*\s+(?:each|every|all|the)\b[^.\n]{0,30}?\b(?:options?|choices?)\b",
    re.I,
)
"""A line that opens an option-by-option review ("Let's analyze each option."): the option line
after it is the review's first entry, not a closing answer."""


def line_letter(line: str, options: Mapping[str, str]) -> str | None:
    match = LINE_REF.match(line)
    if match is None or match.group(1).upper() not in options:
        return None
    letter, rest = match.group(1).upper(), match.group(2)
    if DELIMITED.match(rest) or rest.strip().lower().startswith(options[letter].strip().lower()):
        return letter
    return None


def is_bare_line(line: str, options: Mapping[str, str]) -> bool:
    """A line that is only a letter, possibly with its option text."""
    match = LINE_REF.match(line)
    if match is None:
        return False
    letter = match.group(1).upper()
    rest = match.group(2).strip().strip(".):：-–— ").strip().lower().rstrip(".")
    return not rest or rest == options.get(letter, "").strip().lower().rstrip(".")


_REVIEW = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:options?\s+)?\(?[A-Z](?:[.)][^:\n–—]{0,160}?|:[^:\n–—]{1,160}?)"
    r"(?::|\s[-–—]\s)\s*"
    r"(?![^\n]*\b(?:correct|right|best|answer|most\s+likely)\b)\S"
)


_TENTATIVE = re.compile(
    r"^\s*(?:[-*•]\s*)?(?:options?\s+)?\(?[A-Z]\)?[.,:]?\s+(?:(?:this|it)\s+)?"
    r"(?:seems|appears|looks|may|might|could|would|is\s+(?:possible|plausible|likely|unlikely|less\s+likely|a\s+possibility))\b",
    re.I,
)


def reviews_options(text: str) -> bool:
    """The output opens an option-by-option review ("A) Pneumonia: this is possible …") or
    weighs its first option ("Option A seems to fit because …"), so a cut inside it has not
    answered by that option."""
    return _REVIEW.match(text) is not None or _TENTATIVE.match(text) is not None
