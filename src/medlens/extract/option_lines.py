"""Option letters at the start of a line: a line that is only an option ("C) RNA editing"),
and an output whose last line is one after a line that is none (its closing answer). Shared by
the choice rules (``extract.choice``)."""

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
    after a line that is none (the last of an echoed list is no answer)."""
    lines = [line.strip() for line in text[-600:].splitlines() if line.strip()]
    if len(lines) < 2 or not is_bare_line(lines[-1], options):
        return None
    letter = line_letter(lines[-1], options)
    return letter if letter and line_letter(lines[-2], options) is None else None


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
