"""What letters a piece of an output names at its start: the reading shared by every choice rule.

A container's text ("The answer is (C) Drusen"), a leading line ("A, C", "B. Option text",
"C) Lumbar puncture"), a span that is an option's text, or a paraphrase of one option inside a
commitment. ``choice`` decides what the letters found here mean for the item.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from medlens.extract.containers import sentences
from medlens.extract.mentions import find_mentions, positive_letters
from medlens.extract.option_lines import DELIMITED
from medlens.extract.propositions import _stem


@dataclass(frozen=True)
class Reading:
    """Letters read from one piece of text."""

    letters: tuple[str, ...]
    hedged: bool = False
    """Letters joined by "or" — a hedge between options, not a set."""
    foreign: str = ""
    """An option-shaped letter that is not an option of this item ("E" on a 4-option item)."""
    end: int = 0
    """Where the letters (and any option text after them) end in the text read."""
    contradicted: bool = False
    """One letter followed by another option's exact text ("C) <option D's text>"): the letter
    and the text name two options, so neither is committed to."""


SPAN_PREFIX = re.compile(
    r"^[\s*\"'“”‘’`:=>\-–—]*(?:either\s+|both\s+|(?:most\s+)?(?:probably|likely)\s+|clearly\s+)?"
    r"(?:(?:the\s+)?(?:options?|choices?|letter|answers?)\s*[:：]?\s*|选项\s*)?",
    re.I,
)
_SPAN_NEGATED = re.compile(r"^(?:not|never|neither|none\s+of)\b|^不", re.I)
LETTER = re.compile(r"([(\[]?)([A-Za-z])([)\]]?)(?![A-Za-z0-9'’_])(?!-[A-Za-z0-9])")
"""A letter; one joined to a word by a hyphen ("B-cells", "T-weighted") is part of that word."""
_SEPARATOR = re.compile(
    r"\s*(?:,\s*(?:and|or)\b|,|/|&|\+|、|，|;|\band\b|\bor\b|和|与|以及|及|或者|或)\s*"
    r"(?:(?:options?|choices?)\s+|选项\s*)?",
    re.I,
)
_PACKED = re.compile(r"([A-Z]{2,10})(?![A-Za-z0-9])")
_HEDGE_TAIL = re.compile(
    r"[^.\n]*?\b(?:or\s+(?:possibly|perhaps|maybe|probably)|could\s+also\s+be|might\s+also\s+be|"
    r"may\s+also\s+be|alternatively|or\s+else)\b[^.\n]*?\b(?:option\s+)?\(?((?-i:[A-Z]))\b",
    re.I,
)
_HEDGE_LETTER_TAIL = re.compile(
    r"[^.\n]*?\b(?:option\s+)?\(?((?-i:[A-Z]))\)?\s+(?:is|seems|(?:would|could|might|may)"
    r"(?:\s+also)?\s+be)\s+(?:also\s+)?(?:possible|plausible|considered|a\s+possibility|"
    r"an?\s+(?:option|alternative))\b",
    re.I,
)
"""The other side of a hedge named after the answer: "B, but C is also possible"."""


def read_span(span: str, options: Mapping[str, str]) -> Reading | None:
    """Letters named at the start of a container's text, else the option it starts with."""
    body = SPAN_PREFIX.sub("", span, count=1).strip()
    if not body or _SPAN_NEGATED.match(body):
        return None
    exact = option_with_text(body.rstrip(".。!"), options)
    if exact:
        return Reading((exact,))
    listed = letters_at_start(body, options)
    if listed is not None:
        return listed
    first_sentence = sentences(body)[0] if sentences(body) else body
    letters = positive_letters(find_mentions(first_sentence, options))
    if letters:
        return Reading(tuple(sorted(letters)))
    paraphrased = paraphrased_option(first_sentence, options)
    return Reading((paraphrased,)) if paraphrased else None


_OPTION_WORD = re.compile(r"[a-z0-9]+")
_FILLER = frozenset(
    re.findall(r"\w+", "the and for with from that this into onto than its their is are")
)


def _content_stems(text: str) -> set[str]:
    words = _OPTION_WORD.findall(text.lower())
    return {_stem(word) for word in words if word not in _FILLER and len(word) > 2}


def paraphrased_option(committed: str, options: Mapping[str, str]) -> str | None:
    """The one option whose every content word (two or more) the committed answer says, in any
    order or form ("the answer is stiffness of the ventricular wall, increased" → the option
    "Increased wall stiffness"); None when no option or several fit."""
    said = _content_stems(committed)
    fitting = [
        letter
        for letter, text in options.items()
        if len(wanted := _content_stems(text)) >= 2 and wanted <= said
    ]
    return fitting[0] if len(fitting) == 1 else None


def option_with_text(candidate: str, options: Mapping[str, str]) -> str | None:
    wanted = candidate.strip().lower()
    for letter, option in options.items():
        if option.strip().lower().rstrip(".") == wanted:
            return letter
    return None


def letters_at_start(body: str, options: Mapping[str, str]) -> Reading | None:
    """A letter list, or packed letters ("AC", every one an option) at the start of `body`."""
    packed = _PACKED.match(body)
    if packed and set(packed.group(1)) <= set(options) and len(set(packed.group(1))) > 1:
        return Reading(tuple(packed.group(1)), end=packed.end())
    listed = _letter_list(body, options)
    if listed is None or len(listed.letters) != 1:
        return listed
    said = body[listed.end :].split("\n", 1)[0].strip(" .:;)(-–—")
    other = option_with_text(said, options)
    return replace(listed, contradicted=other not in (None, listed.letters[0]))


def _letter_list(body: str, options: Mapping[str, str]) -> Reading | None:
    """``B``, ``(c)``, ``A, C``, ``A and C``, ``A/C``, ``B or C``, ``B. Option text`` at the start."""
    letters: list[str] = []
    hedged, position = False, 0
    while True:
        match = LETTER.match(body, position)
        if match is None or not _is_letter_token(body, match, options):
            break
        letter = match.group(2).upper()
        if letter not in options:
            return Reading((), foreign=letter) if not letters and letter.isupper() else None
        letters.append(letter)
        position = _skip_option_text(body, match.end(), options[letter], match.group(2))
        joint = _SEPARATOR.match(body, position)
        if joint is None or LETTER.match(body, joint.end()) is None:
            break
        hedged = hedged or bool(re.search(r"\bor\b|或", joint.group(0), re.I))
        position = joint.end()
    if not letters:
        return None
    # "C, but it could also be B" / "C (Drusen) or possibly B": a hedge, not an answer.
    for pattern in (_HEDGE_TAIL, _HEDGE_LETTER_TAIL):
        tail = pattern.match(body, position)
        if tail and tail.group(1).upper() in options and tail.group(1).upper() not in letters:
            hedged = True
    return Reading(tuple(letters), hedged=hedged, end=position)


def _is_letter_token(body: str, match: re.Match[str], options: Mapping[str, str]) -> bool:
    """Upper case, bracketed or delimited letters are letters; a bare lower-case "a"/"i" followed
    by a word is English ("a normal fundus"), as is "e.g."/"i.e."."""
    letter, wrapped = match.group(2), bool(match.group(1) or match.group(3))
    rest = body[match.end() :]
    if re.match(r"\.[a-z]\.", rest):
        return False
    if letter.isupper() or wrapped or DELIMITED.match(rest):
        return True
    if letter in "ai":
        option = options.get(letter.upper(), "").strip().lower()
        return bool(option) and rest.strip().lower().startswith(option)
    return True


def _skip_option_text(body: str, position: int, option: str, letter: str) -> int:
    """Position after ``. Option text`` / ``: Option text`` / ``(Option text)`` following a letter.

    After a bare "A"/"I" with no delimiter the text must match in case too: "A Normal" names
    option A, "A normal fundus" is English.
    """
    text = re.escape(option.strip().rstrip("."))
    if letter in "AI" and re.match(r"\s+\w", body[position:]):
        match = re.compile(r"\s+" + text).match(body, position)
    else:
        match = re.compile(r"\s*[.):：\-–—]?\s*\(?" + text + r"\)?", re.I).match(body, position)
    return match.end() if match else position
