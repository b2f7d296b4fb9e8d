"""Question polarity: a yes/no statement counts only when its proposition is the question's.

A careful reader of "Does the liver look normal?" reads "There is no abnormality." as **yes**:
the statement negates the *complementary* proposition (abnormal), which affirms the question's
(normal). The same sentence answering "Is there an abnormality?" is **no**, and answering "Is
there a mass?" it is about another proposition and says nothing (``unparsed``): absence of one
finding is not absence of another.

The rules, clause by clause (sentences split at commas, "but", "however" …):

- **Hedges** ("can't rule out", "cannot exclude", "possibly", "may represent", "suspicious for",
  "likely" …, :data:`HEDGE`) make a clause unread. A hedged clause about the question leaves the
  whole answer ``unparsed`` (never yes or no): "I can't rule out a mass." is no "no".
- **Polar terms** (:data:`COMPLEMENTARY_PAIRS`): when the question asks whether something is
  normal, healthy, benign or enlarged (or the opposite), a clause that says the question's term
  keeps its polarity ("The liver looks normal." → yes, "… is not normal" → no) and a clause that
  says the complementary term flips it ("There is no abnormality." → yes, "The lung is diseased."
  → no). *healthy* reads as *normal* and *diseased* as *abnormal*. A clause that names another
  organ than the question's ("The kidney is abnormal." for the liver) is about something else.
  On a question about abnormality, a plain finding ("There is a mass in the spleen.") affirms it.
- **Findings** (every other question, "Is there a pleural effusion?"): a clause that names at
  least half of the question's content words (and its side: left/right …) affirms the finding,
  or negates it with "no", "not", "without", "absent", "n't" …; "It is present." (no word of its
  own) refers back to the question. *present* / *absent* in the question ("Is cardiomegaly
  present?") are the question's own assertion and negation, not separate terms.
- **About something else**: a clause, affirmed or negated, that names neither the question's
  proposition nor its complement is not read ("There is no effusion." for "Is there a mass?").

Clauses about the question that disagree leave the answer unread. Only English questions are
read this way; Chinese answers keep the presence/absence cues of ``yes_no``.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from medlens.extract.concepts import concepts_in
from medlens.extract.negation import NEGATED, NEGATED_PHRASE, double_negations, head
from medlens.extract.propositions import _CLAUSE, _content_words, _stem

COMPLEMENTARY_PAIRS: tuple[tuple[str, str], ...] = (
    ("normal", "abnormal"),
    ("healthy", "diseased"),
    ("present", "absent"),
    ("benign", "malignant"),
    ("enlarged", "normal-sized"),
    ("fractured", "intact"),
)
"""The question's term and the term whose negation affirms it (in both directions)."""

_SENSE = {
    "healthy": "normal",
    "diseased": "abnormal",
    "affected": "abnormal",
    "unaffected": "normal",
}
"""Terms read alike: a healthy organ is a normal one."""

_TERMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, re.I))
    for name, pattern in (
        (
            "normal-sized",
            r"\bnormal[\s-]+sized?\b|\bnormal\s+in\s+(?:size|caliber|calibre)\b|"
            r"\b(?:size|caliber|calibre)\s+(?:is\s+|are\s+|appears\s+|looks\s+)?normal\b|"
            r"\bnormal\s+(?:\w+\s+)?(?:size|caliber|calibre)\b",
        ),
        (
            "abnormal",
            r"\babnormal(?:ity|ities|ly)?\b|\bnot\s+normal\b(?![\s-]+sized?\b|\s+in\s+size)",
        ),
        ("normal", r"\bnormal(?:ly)?\b|\bunremarkable\b|\bwithin\s+normal\s+limits\b"),
        ("diseased", r"\bdiseased?\b|\bdiseases\b|\bunhealthy\b|\bpatholog(?:y|ical|ic)\b"),
        ("healthy", r"\bhealthy\b"),
        ("malignant", r"\bmalignan(?:t|cy|cies)\b|\bcancerous\b"),
        ("benign", r"\bbenign\b|\bnon-?cancerous\b"),
        ("enlarged", r"\benlarge(?:d|ment)?\b|\benlarging\b|\bdilated\b|\bdilatation\b"),
        ("fractured", r"\bfractur(?:e|ed|es|ing)\b|\bbroken\b"),
        ("intact", r"\bintact\b|\bunbroken\b"),
        ("unaffected", r"\bunaffected\b|\bspared\b"),
        ("affected", r"\baffected\b"),
    )
)
_ANY_TERM = re.compile(
    "|".join(f"(?P<t{i}>{pattern.pattern})" for i, (_, pattern) in enumerate(_TERMS)), re.I
)
"""Every term form in one scan: at each place the first listed form that fits wins, so the
longer forms (normal-sized, not normal) are listed before the shorter ones."""
_COMPLEMENT = {a: b for a, b in COMPLEMENTARY_PAIRS} | {b: a for a, b in COMPLEMENTARY_PAIRS}
_ASSERTION_TERMS = ("present", "absent")

HEDGE = re.compile(
    r"\b(?:can(?:no|['’])?t|can\s+not|could\s*(?:not|n['’]t))\s+(?:be\s+)?(?:(?:fully|entirely|"
    r"completely|definitely|confidently)\s+)?(?:rule[ds]?\s+out|exclude[ds]?)\b"
    r"|\bnot\s+(?:be\s+)?(?:(?:entirely|fully|completely)\s+)?(?:excluded|ruled\s+out)\b"
    r"|\bdifficult\s+to\s+(?:exclude|rule\s+out)\b"
    r"|\b(?:possibl[ey]|probabl[ey]|likely|unlikely|questionabl[ey]|equivocal|presumabl[ey]|"
    r"perhaps|maybe|indeterminate|uncertain|unclear|borderline|suspected)\b"
    r"|\bsuspicious\s+(?:for|of)\b|\bconcerning\s+for\b|\bsuggest(?:s|ed|ive|ing)?\b"
    r"|\b(?:may|might|could)\s+(?:(?:also|well)\s+)?(?:represent|be|indicate|reflect|have|show|"
    r"correspond|suggest|contain)\b"
    r"|\bnot\s+(?:sure|certain)\b|\bcannot\s+be\s+(?:determined|confirmed|assessed)\b",
    re.I,
)
"""Uncertainty about a finding: such a statement is neither yes nor no."""


def hedges(text: str, question: str = "") -> bool:
    """`text` hedges, in words of its own: "probably" restating a question that says "opened
    muscle probably psoas" (a PathVQA caption) is the question's, not a hedge — the hedge with
    the words either side of it is judged against the question."""
    asked = " ".join(_WORDS.findall(question.lower()))
    for match in HEDGE.finditer(text):
        before = _WORDS.findall(text[max(0, match.start() - 40) : match.start()].lower())[-1:]
        after = _WORDS.findall(text[match.end() : match.end() + 40].lower())[:1]
        quoted = " ".join([*before, *_WORDS.findall(match.group(0).lower()), *after])
        if not asked or quoted not in asked:
            return True
    return False


_WORDS = re.compile(r"[a-z0-9']+")


def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(word) for word in text.split())


_GENERIC = _stems(
    """
    image images picture scan study view film radiograph photo finding findings abnormality
    abnormalities sign signs evidence it this that they here what which one both any all
    appear appears look looks seem seems visible noted identified evident apparent seen
    present absent absence presence observed detected demonstrated shown show shows
    certainly clearly definitely obvious obviously overall entire whole also only just
    anything everything something nothing limit limits
    normal abnormal healthy diseased benign malignant enlarged sized size
    anatomy anatomical structure structures
    """
)
"""Words a clause may add without naming another subject ("It is seen in this image.")."""
_QUESTION_FILLER = _stems("look looks appear appears seem seems")
_SIDES = {"left": "right", "right": "left", "upper": "lower", "lower": "upper",
          "anterior": "posterior", "posterior": "anterior", "superior": "inferior",
          "inferior": "superior", "medial": "lateral", "lateral": "medial"}  # fmt: skip
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Question:
    """What a yes/no question asks: a polar term (or none), its subject words and sides."""

    term: str | None
    """``normal``, ``abnormal``, ``benign``, ``malignant``, ``enlarged`` or ``normal-sized``
    (healthy/diseased read as normal/abnormal); None for a finding question."""
    negated: bool
    words: frozenset[str]
    """Stemmed content words, without the polar term and its side words."""
    sides: frozenset[str]
    concepts: frozenset[tuple[str, str]] = frozenset()
    """(axis, canonical) of the vocabulary values the question names (modality, region …)."""
    identity: bool = False
    """The question asks what the image is ("Is this a CT?", "Is the patient female?")."""
    negated_phrases: frozenset[str] = frozenset()
    """Negations inside what the question asks about ("renal facies no neck"): a clause that
    repeats one does not negate the answer."""
    findings: frozenset[tuple[str, str]] = frozenset()
    """(``finding``, canonical) of the findings the question names: a clause naming one by
    another name ("pneumoperitoneum" to "Is there free air?") is about it."""


def readable(question: str) -> bool:
    """Questions this module reads against: non-empty English (not Chinese) text."""
    return bool(question.strip()) and not _CJK.search(question)


_THAN_NORMAL = re.compile(r"\b(?:than|from)\s+(?:normal|usual|expected)\b", re.I)
""""wider than normal" compares with normal: the question asks about widening, not normality."""


@functools.lru_cache(maxsize=4096)
def parse_question(question: str) -> Question:
    question = _THAN_NORMAL.sub(" ", question)
    found = terms_in(question)
    term = next((t for t in found if t not in _ASSERTION_TERMS), None)
    negation = NEGATED.search(head(double_negations(question)))
    negated = bool(negation) != ("absent" in found and term is None)
    words = frozenset(_words_without_terms(question)) - _QUESTION_FILLER - _GENERIC
    sides = frozenset(w for w in words if w in _SIDES)
    identity = _IDENTITY.match(question) is not None
    phrases = frozenset(m.group(0).lower() for m in NEGATED_PHRASE.finditer(question))
    concepts, findings = concepts_in(question), concepts_in(question, _FINDING_AXIS)
    if term == "enlarged" and len(words) == 1:  # "Is the heart enlarged?" asks of cardiomegaly
        findings |= concepts_in(f"enlarged {next(iter(words))}", _FINDING_AXIS)
    return Question(
        _sense(term), negated, words - sides, sides, concepts, identity, phrases, findings
    )


_FINDING_AXIS = ("finding",)


def _without_asked(clause: str, asked: Question) -> str:
    """`clause` without the negations the question itself holds ("… renal facies no neck")."""
    if not asked.negated_phrases:
        return clause
    return NEGATED_PHRASE.sub(
        lambda m: " " if m.group(0).lower() in asked.negated_phrases else m.group(0), clause
    )


_IDENTITY = re.compile(
    r"^\W*(?:is|was|are)\s+(?:this|it|the\s+(?:image|scan|picture|study|film|patient)|this\s+"
    r"(?:image|scan|picture|study|film|patient))\b|^\W*(?:was|is)\s+(?:this|the)\s+(?:image|scan)"
    r"\s+(?:taken|obtained|acquired)\b",
    re.I,
)
_ONE_PER_IMAGE = frozenset({"modality", "plane", "sex", "body_region"})


def _identity_reading(
    clause: str, asked: Question, negated: bool
) -> tuple[bool, str | None] | None:
    """To "Is this a CT?": "This is a computed tomography image." is yes, "This is an MRI." is
    no (an image has one modality, plane, sex, region); None when the clause names neither."""
    axes = {axis for axis, _ in asked.concepts if axis in _ONE_PER_IMAGE}
    if not asked.identity or not axes:
        return None
    said = {concept for concept in concepts_in(clause) if concept[0] in axes}
    if said - asked.concepts:
        return True, None if negated else _answer(affirmed=False, question_negated=asked.negated)
    if said:  # "This is a CT scan." to "Is this a CT of the abdomen?": the region unsaid
        return True, _answer(affirmed=not negated, question_negated=asked.negated)
    return None


def _names_an_alternative(clause: str, asked: Question) -> bool:
    """The clause names another value of an axis the question names ("No, this is a CT of the
    head." to "Is this a CT of the abdomen?"): it is about another proposition."""
    if not asked.concepts:
        return False
    said = concepts_in(clause)
    axes = {axis for axis, _ in asked.concepts}
    return any(axis in axes and (axis, value) not in asked.concepts for axis, value in said)


def terms_in(text: str) -> list[str]:
    """Polar terms named in `text`, each span read once (the longest form first)."""
    found: list[str] = []
    for match in _ANY_TERM.finditer(text):
        name = _TERMS[int(str(match.lastgroup)[1:])][0]
        if name not in found:
            found.append(name)
    return found


def _sense(term: str | None) -> str | None:
    return _SENSE.get(term, term) if term is not None else None


def _words_without_terms(text: str) -> list[str]:
    return [w for w in _content_words(_ANY_TERM.sub(" ", text)) if not NEGATED.fullmatch(w)]


@dataclass(frozen=True)
class Reading:
    """What the clauses of an answer say about the question."""

    answer: str | None
    """``yes``/``no``, or None (nothing about the question, a hedge, or disagreeing clauses)."""
    reason: str
    """``read``, ``hedge``, ``conflict`` or ``other_proposition``."""


def read_statement(text: str, question: str) -> Reading:
    """yes/no from the clauses of `text` that are about `question`'s proposition."""
    asked = parse_question(question)
    readings: set[str] = set()
    hedged = False
    for clause in clauses(text, commas="," not in question):
        about, reading = read_clause(clause, asked)
        hedge = hedges(clause, question)
        if hedge and (about or _ANAPHORA.search(clause)):  # "… a small one cannot be excluded"
            hedged = True
        elif about and not hedge and reading is not None:
            readings.add(reading)
    if hedged:
        return Reading(None, "hedge")
    if len(readings) > 1:
        return Reading(None, "conflict")
    if readings:
        return Reading(readings.pop(), "read")
    return Reading(None, "other_proposition")


_CLAUSE_BUT_COMMA = re.compile(
    r"[;:()]|\s[-–—]\s|\b(?:but|however|whereas|while|although|though|yet|except)\b", re.I
)


def clauses(text: str, commas: bool = True) -> list[str]:
    """Clauses of `text`; not split at commas when the question itself has them ("does
    sectioned surface show circumscribed, dark tan, haemorrhagic and necrotic tumour?")."""
    splitter = _CLAUSE if commas else _CLAUSE_BUT_COMMA
    parts = re.split(r"(?<=[.!?;])\s+|\n+", text)
    return [c.strip() for part in parts for c in splitter.split(part) if c and c.strip()]


def read_clause(clause: str, asked: Question) -> tuple[bool, str | None]:
    """(whether the clause is about the question, its yes/no reading)."""
    if _CJK.search(clause):
        return False, None
    named = [_sense(t) for t in terms_in(clause)]
    words = set(_words_without_terms(clause))
    if words & ({_SIDES[side] for side in asked.sides} - asked.sides):
        return False, None  # the other side: another proposition
    negated = bool(NEGATED.search(double_negations(_without_asked(clause, asked))))
    identified = _identity_reading(clause, asked, negated)
    if identified is not None:
        return identified
    if _names_an_alternative(clause, asked):
        return False, None  # another modality, region, organ …: another proposition
    if (
        asked.findings
        and asked.sides <= words
        and asked.findings & concepts_in(clause, _FINDING_AXIS)
    ):
        return True, _answer(affirmed=not negated, question_negated=asked.negated)  # by any name
    own = words - asked.words - _GENERIC - asked.sides
    if asked.term is not None:
        return _read_term_clause(clause, asked, named, words, own, negated)
    # "It is present.", "There is none.": nothing of its own, so it refers back to the question
    anaphoric = not own and not named and _ANAPHORA.search(clause) is not None
    shared = len(words & asked.words)
    names_it = shared > 0 and 2 * shared >= len(asked.words) and asked.sides <= words
    if not (anaphoric or names_it):
        return False, None
    return True, _answer(affirmed=not negated, question_negated=asked.negated)


def _read_term_clause(
    clause: str,
    asked: Question,
    named: list[str | None],
    words: set[str],
    own: set[str],
    negated: bool,
) -> tuple[bool, str | None]:
    term = asked.term
    assert term is not None
    complement = _sense(_COMPLEMENT.get(term))
    says_term, says_complement = term in named, complement in named
    other_subject = bool(own) and bool(asked.words) and not words & asked.words
    if says_term and says_complement:
        return True, None
    if term not in _GENERIC_TERMS and not named and not own and _ANAPHORA.search(clause):
        # "It is not.", "This is not seen in the image." refer back to "Is the X fractured?"
        return True, _answer(affirmed=not negated, question_negated=asked.negated)
    if (says_term or says_complement) and not other_subject:
        affirmed = (not negated) if says_term else negated
        return True, _answer(affirmed=affirmed, question_negated=asked.negated)
    if term in _GENERIC_TERMS and not named and not negated and own and _FINDING.search(clause):
        # A finding stated plainly ("There is a cyst in the spleen.") is an abnormality.
        return True, _answer(affirmed=term == "abnormal", question_negated=asked.negated)
    return False, None


_GENERIC_TERMS = ("normal", "abnormal")
_ANAPHORA = re.compile(r"\b(?:it|this|that|they|there|one|such)\b", re.I)
_FINDING = re.compile(
    r"\bthere\s+(?:is|are|was|were)\s+(?:a|an|some|multiple|several|many|two|three|\d+|mild|"
    r"moderate|severe|large|small|extensive|evidence|signs?)\b"
    r"|\b(?:shows?|showing|demonstrates?|reveals?|displays?|has|have|contains?)\s+(?:a|an|"
    r"multiple|several|some|evidence|signs?)\b"
    r"|\b(?:is|are)\s+(?:seen|present|visible|noted|identified|evident)\b",
    re.I,
)


def _answer(*, affirmed: bool, question_negated: bool) -> str:
    return "yes" if affirmed != question_negated else "no"


__all__ = [
    "COMPLEMENTARY_PAIRS",
    "HEDGE",
    "Question",
    "Reading",
    "clauses",
    "hedges",
    "parse_question",
    "read_clause",
    "read_statement",
    "readable",
    "terms_in",
]
