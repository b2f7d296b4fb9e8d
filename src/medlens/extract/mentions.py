"""Where an output mentions an option — by explicit letter reference or by option text — and
whether that mention is negated ("not glaucoma", "B is incorrect"), affirmed ("C is correct")
or plain.

Written by hand because no library reads option mentions with negation scope; the scope rules
are deliberately short and local (the clause around the mention), in the spirit of NegEx.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Polarity = Literal["negated", "affirmed", "plain"]


@dataclass(frozen=True)
class Mention:
    letter: str
    start: int
    end: int
    polarity: Polarity
    by_text: bool
    """True when found through the option's text, False through a letter reference."""


_LETTER_REF = re.compile(
    r"(?:\b(?:options?|choices?|answers?|letter)\s+|选项\s*)[(\[]?([A-Za-z])[)\]]?(?![\w'’])"
    r"|[(\[]([A-Za-z])[)\]](?![\w'’])"
    r"|(?:(?:^|\n)[ \t]*(?:[-*•][ \t]*)?|(?<=[.!?;]\s)(?=[A-Z][):：]))([A-Z])(?:[.):：]|[ \t]+[-–—])"
    r"|\b([A-Z])(?=\s+(?:is|was|would\s+be|seems|appears)\s+(?:the\s+)?(?:in)?correct\b)"
    r"|(?<![A-Za-z])([A-Z])(?=(?:\s*[、，,和与及或]\s*[A-Z])*\s*(?:项|选项)?(?:是|为)?(?:都|均)?"
    r"(?:正确|对|错误|不对|不正确))",
    re.I,
)
_LETTER_UPPER_ONLY = (3, 4, 5)
"""Groups of _LETTER_REF whose letter must be upper case (no option word or brackets around it)."""

_BOUNDARY = re.compile(
    r"[.;!?\n:。；！？，,]|\b(?:but|however|although|though|whereas|while|yet)\b|但|而|然而", re.I
)
_PRE_NEGATION = re.compile(
    r"\b(?:not|no|never|without|rather\s+than|instead\s+of|unlikely|rules?\s+out|ruled\s+out|"
    r"ruling\s+out|exclude[sd]?|excluding|absence\s+of|absent|neither|nor|cannot|can\s*not|"
    r"unable|whether|if|unclear|uncertain|except|other\s+than|less\s+likely|against|"
    r"wrong|incorrect|eliminate[sd]?|eliminating)\b|n['’]t\b|不是|并非|排除|没有|不像|而非|除了",
    re.I,
)
_VERB = r"(?:is|are|was|were|seems|appears|would\s+be|can\s+be|should\s+be|has\s+been|must\s+be)"
_LIST_NEXT = r"\s*(?:,|/|&|\band\b|\bor\b|[、，和与及或])\s*\(?((?-i:[A-Z]))\)?(?![A-Za-z0-9_'’])"
_LIST_TAIL = re.compile(_LIST_NEXT, re.I)
_MORE_LETTERS = rf"(?:{_LIST_NEXT})*"
"""The rest of a letter list, so that "A and C are incorrect" says it of A too."""
_POST_NEGATION = re.compile(
    rf"^[\s\"')\]]*(?:\([A-Z]\)\s*)?{_MORE_LETTERS}[,:\-–—]?\s*(?:"
    rf"{_VERB}\s*(?:also\s+)?not\b"
    # "a lumbar puncture should not be done", "RNA editing does not occur …"
    r"|(?:should|must|need|needs|does|do|did|would|will)\s+not\b|(?:should|must|does|do|did|"
    r"would|wo)n['’]t\b"
    rf"|(?:{_VERB}\s*)?(?:also\s+)?(?:incorrect|wrong|unlikely|less\s+likely|excluded|"
    r"ruled\s+out|false|inappropriate|eliminated)"
    # A verbless "not" negates the mention only when nothing else follows it: in "drusen,
    # not glaucoma" it negates glaucoma (the next clause), not drusen.
    r"|(?:also\s+)?not\b(?=\s*(?:$|[.;,!?)\n]|(?:the\s+)?(?:correct|right|true|likely|answer|"
    r"appropriate|consistent|present|seen)\b))"
    r"|(?<=[:\-–—])\s*no\b(?=\s*(?:$|[.;,!?)\n])))"  # "A: no" in an option-by-option review
    rf"|^\s*(?:\([A-Z]\)\s*)?{_MORE_LETTERS}\s*(?:项|选项)?(?:是|为)?(?:都|均)?"
    r"(?:错误|不对|不正确|不是|可以排除|被排除)",
    re.I,
)


def negated_after(text: str) -> bool:
    """Whether `text`, read right after an option mention, negates it ("… is incorrect")."""
    return _POST_NEGATION.search(text) is not None


_POST_AFFIRMATION = re.compile(
    rf"^[\s\"')\]]*(?:\([A-Z]\)\s*)?{_MORE_LETTERS}[:\-–—]?\s*(?:is|are|would\s+be|seems\s+to\s+be|"
    r"appears\s+to\s+be|=)?\s*(?:the\s+)?(?:correct|right|best|true|most\s+(?:likely|appropriate|"
    r"accurate|consistent|probable)|answer)\b"
    r"|^\s*(?:is|would\s+be)\s+my\s+(?:final\s+)?(?:answer|choice|pick)\b"
    r"|^[\s\"')\]]*[:\-–—]\s*yes\b(?=\s*(?:$|[.;,!?)\n]))"  # "C: yes" in the same review
    rf"|^\s*(?:\([A-Z]\)\s*)?{_MORE_LETTERS}\s*(?:项|选项)?(?:是|为)?(?:都|均)?(?:正确|对)",
    re.I,
)


def find_mentions(text: str, options: Mapping[str, str]) -> list[Mention]:
    """Every option mention in `text`, in text order, with its polarity."""
    found = _letter_mentions(text, options) + _text_mentions(text, options)
    return sorted(found, key=lambda mention: mention.start)


_ENDS_REFERENCE = re.compile(r"[)\]]|\s*(?:$|[.,;:!?])")


def _letter_mentions(text: str, options: Mapping[str, str]) -> list[Mention]:
    mentions = []
    for match in _LETTER_REF.finditer(text):
        group = next(i for i in range(1, 6) if match.group(i) is not None)
        letter = match.group(group)
        if group in _LETTER_UPPER_ONLY and not letter.isupper():
            continue
        if group == 1 and letter in "ai" and not _ENDS_REFERENCE.match(text, match.end()):
            continue  # "answers a question", "option i think": English, not a letter
        letter = letter.upper()
        if letter in options:
            start, end = match.start(group), match.end(group)
            mentions.append(Mention(letter, start, end, polarity(text, start, end), False))
        # "options B and D are correct": the option word covers every letter of its list
        position = match.end()
        while group == 1 and (more := _LIST_TAIL.match(text, position)) is not None:
            position = more.end()
            if more.group(1) in options:
                start, end = more.start(1), more.end(1)
                mentions.append(
                    Mention(more.group(1), start, end, polarity(text, start, end), False)
                )
    return mentions


def _text_mentions(text: str, options: Mapping[str, str]) -> list[Mention]:
    """Whole-word, case-insensitive option-text hits; longer option texts claim their span first
    ("diabetic retinopathy" is not also a mention of an option "retinopathy")."""
    lowered = text.lower()
    taken = [False] * len(text)
    mentions = []
    for letter, option in sorted(options.items(), key=lambda kv: -len(kv[1])):
        needle = option.strip().lower().rstrip(".")
        if not needle:
            continue
        for start in _find_word(lowered, needle):
            end = start + len(needle)
            if any(taken[start:end]):
                continue
            taken[start:end] = [True] * (end - start)
            mentions.append(Mention(letter, start, end, polarity(text, start, end), True))
    return mentions


def _find_word(haystack: str, needle: str) -> list[int]:
    hits, start = [], haystack.find(needle)
    while start >= 0:
        end = start + len(needle)
        before = haystack[start - 1] if start else " "
        after = haystack[end] if end < len(haystack) else " "
        if not (_is_word_char(before) and _is_word_char(needle[0])) and not (
            _is_word_char(after) and _is_word_char(needle[-1])
        ):
            hits.append(start)
        start = haystack.find(needle, start + 1)
    return hits


def _is_word_char(char: str) -> bool:
    # ASCII letters and digits bound words; CJK text has no spaces, so it never blocks a match.
    return char.isascii() and (char.isalnum() or char == "_")


def polarity(text: str, start: int, end: int) -> Polarity:
    """Negated, affirmed or plain, judged from the clause around ``text[start:end]``."""
    before = text[max(0, start - 80) : start]
    cuts = list(_BOUNDARY.finditer(before))
    clause_before = before[cuts[-1].end() :] if cuts else before
    after = text[end : end + 80]
    if _PRE_NEGATION.search(clause_before) or _POST_NEGATION.search(after):
        return "negated"
    if _POST_AFFIRMATION.search(after):
        return "affirmed"
    return "plain"


def positive_letters(mentions: list[Mention], *, affirmed_only: bool = False) -> set[str]:
    """Letters with at least one mention that is not negated (or, optionally, affirmed)."""
    wanted = ("affirmed",) if affirmed_only else ("affirmed", "plain")
    return {m.letter for m in mentions if m.polarity in wanted}
