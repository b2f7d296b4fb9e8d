"""What an output cut off mid-sentence committed to before the cut (issue 42).

A careful reader reads a cut output ("Yes, there is a mass in the left lower lobe, which") by
what it said before the cut: its finished sentences, and of its unfinished last sentence the
words that already make a claim. The unfinished sentence is trimmed from its end:

- words that only lead on to what was cut ("the", "in", "which", "and", a size such as
  "small") are dropped: "…an irregular mass in the" reads "…an irregular mass";
- a word that leaves the claim itself open — a verb or copula ("is", "shows"), a negation or
  hedge ("no", "not", "or", "possibly"), or "of" after a word that announces the claim
  ("evidence of", "suggestive of", "consistent with") — drops its whole clause, back to the
  last comma, colon, dash, bracket or "which"/"because"/"but": "There is no evidence of" says
  nothing, "Yes, there is a displaced fracture of the" still says "Yes".

What is left is read by the ordinary rules; a cut output whose committed part holds no answer is
``unparsed`` (``truncated``). :func:`committed_part` also gives the dropped part, which
``medlens show`` prints.
"""

from __future__ import annotations

import re

from medlens.extract.yes_no import read_polar_word


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SENTENCE_END = re.compile(r"[.!?。！？;；](?=\s)|\n")
_LEADING = _words(
    """the a an of in on at to by for from into onto with within along as than and its their
    these this those his her which that who whose where when while there very more most less
    small large big tiny mild moderate severe slight marked extensive focal diffuse multiple
    several some few many numerous significant"""
)
"""Words that lead on to what was cut without a claim of their own."""
_OPEN_CLAIM = _words(
    """is are was were be been being am shows show showing shown demonstrates demonstrate
    demonstrating reveals reveal revealing indicates indicate indicating suggests suggest
    suggesting appears appear seems seem looks look represents represent representing include
    includes including concerning suspicious consistent compatible indicative suggestive
    no not nor or either neither without possibly probably likely may might could cannot can
    would should will since"""
)
"""Words after which the claim itself is still to come."""
_ANNOUNCING = _words(
    """evidence sign signs feature features finding findings suggestive indicative consistent
    compatible absence presence lack concerning suspicious diagnosis answer option choice
    cause"""
)
"""Words whose "of"/"for"/"with" introduces the claim ("evidence of")."""
_CLAUSE_BREAK = re.compile(
    r"(?:[,;:(\[]|\s[-–—]\s|—|\b(?:which|because|but|while|whereas|although|though)\b)", re.I
)
_MARKS = ",;:([-–—'\"“”‘’*`"
_BREAKS = frozenset(",;:([-–—")
_BREAK_WORDS = _words("which because but while whereas although though")
"""A dropped clause ends here: whatever it left open, the words before it stand."""
_LEAD_WORD = re.compile(r"^\W*((?:yes|no)\b)", re.I)
_POLAR = re.compile(r"^\W*(?:yes|no|maybe|not)\W*$", re.I)


def committed_part(text: str, *, open_answer: bool = False) -> tuple[str, str]:
    """(what a cut output committed to, what was dropped): its finished sentences and the
    claim-making words of its unfinished last one. For an `open_answer` a trailing "and",
    "with" or "plus" leaves the answer open too (a list was coming: "The liver and")."""
    text = text.rstrip()
    ends = [match.end() for match in _SENTENCE_END.finditer(text)]
    start = ends[-1] if ends else 0
    kept = text[:start] + _claimed(text[start:], _LISTING if open_answer else frozenset())
    kept = kept.rstrip()
    return kept, text[len(kept) :].strip()


_LISTING = frozenset({"and", "with", "plus", "as", "including"})


def _claimed(sentence: str, listing: frozenset[str]) -> str:
    """The words of an unfinished sentence that already make a claim ("" when none do)."""
    breaks = [match.start() for match in _CLAUSE_BREAK.finditer(sentence)]  # found once
    whole = sentence
    while True:  # every pass shortens the sentence to an earlier clause break
        if _POLAR.match(sentence):  # "No, there is no evidence of": "No"
            return sentence.strip()
        trimmed, open_claim = _trim(sentence, listing)
        if not open_claim:
            return trimmed
        while breaks and breaks[-1] >= len(trimmed):
            breaks.pop()
        if not breaks:  # "No there is no": "No"; "No abnormality is" names no answer word
            lead = _LEAD_WORD.match(whole)
            return lead.group(1) if lead and read_polar_word(whole) in ("yes", "no") else ""
        sentence = trimmed[: breaks.pop()]


def _trim(sentence: str, listing: frozenset[str]) -> tuple[str, bool]:
    """`sentence` without its leading-on words, and whether one of them left a claim open."""
    open_claim, end = False, len(sentence)
    while True:  # each step looks at one token before `end` (never copies the sentence)
        found = _last_token(sentence, end)
        if found is None:
            return "", open_claim
        start, stop = found
        word = sentence[start:stop]
        lowered = word.lower()
        if word[0] in _BREAKS or lowered in _BREAK_WORDS:
            open_claim = False  # the open claim was in the dropped clause
        elif word[0] in _MARKS:
            pass
        elif lowered in _OPEN_CLAIM or lowered in listing or _announced(lowered, sentence, start):
            open_claim = True
        elif lowered not in _LEADING or (word == "A" and sentence[:start].strip()):
            return sentence[:stop], open_claim  # "… is A" names option A, not an article
        end = start


def _last_token(text: str, end: int) -> tuple[int, int] | None:
    """(start, stop) of the last token of ``text[:end]``: a run of ASCII letters and digits, or
    of other characters that are not spaces."""
    stop = end
    while stop and text[stop - 1].isspace():
        stop -= 1
    if not stop:
        return None
    wordy = _is_word(text[stop - 1])
    start = stop - 1
    while start and not text[start - 1].isspace() and _is_word(text[start - 1]) == wordy:
        start -= 1
    return start, stop


def _is_word(char: str) -> bool:
    return char.isascii() and char.isalnum()


def _announced(word: str, sentence: str, start: int) -> bool:
    """ "of" after "evidence", "with" after "consistent": the claim comes after it."""
    if word not in ("of", "for", "with", "to"):
        return False
    before = _last_token(sentence, start)
    return before is not None and sentence[before[0] : before[1]].lower() in _ANNOUNCING


_LOOP_TAIL = 1_200
_UNIT = re.compile(r"[A-Za-z]\S*\s+\S")


def ends_in_loop(text: str) -> bool:
    """The output ends repeating one span of two or more words three times or more (a
    degenerate loop, "The professor: The professor: The profe"): it ran until its token cap, and
    is read as cut there."""
    tail = text[-_LOOP_TAIL:]
    for period in range(4, min(400, len(tail) // 3) + 1):
        if tail[-2 * period :] == tail[-3 * period : -period] and _UNIT.search(tail[-period:]):
            return True
    return False
