"""Yes/no statements read against the question: restatements, study conclusions, "no doubt".

- **Restatement**: a sentence that says the question's proposition ("Is there narrowing of the
  left main bronchus?" → "There is narrowing of the left main bronchus.") is yes; the same
  sentence with a negation ("… is not narrowed", "without narrowing") is no. A sentence
  restates the question when it holds at least :data:`RESTATED_SHARE` of the question's content
  words; a hedge ("may", "suggests", "possible") leaves it unread.
- **Study conclusions** (PubMedQA): "The study demonstrates a significant association." is yes,
  "No significant difference was found." is no. Conclusions about a *difference* are read only
  when the question does not ask about sameness ("Are the outcomes similar?"), where the
  polarity would flip.
- **Affirmations**: "There is no doubt that …", "undoubtedly", "without doubt" affirm what
  follows; they are rewritten to "certainly" before the presence/absence cues run, so "no"
  inside them is not read as a negation.
"""

from __future__ import annotations

import re


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


RESTATED_SHARE = 0.6

_NO_DOUBT = re.compile(
    r"\b(?:there\s+(?:is|can\s+be)\s+no\s+doubt|no\s+doubt|without\s+(?:a\s+|any\s+)?doubt|"
    r"undoubtedly|beyond\s+(?:any\s+|a\s+)?doubt)(?:\s+that)?\b",
    re.I,
)
_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?", re.I)
_STOP = _word_set(
    """
    a an the is are was were be been being do does did has have had there this that these those
    it its of in on at to for by with from as any some image images picture scan shown show shows
    seen present visible evidence which what patient's patient
    """
)
_NEGATION = _word_set(
    "no not without absent absence none neither nor never negative free isn't aren't doesn't "
    "don't wasn't weren't cannot can't n't"
)
_HEDGE = _word_set(
    "may might could possibly possible probably perhaps likely unlikely suggest suggests "
    "suggestive maybe unclear uncertain whether if cannot"
)

_POSITIVE_EFFECT = (
    r"(?:association|difference|correlation|relationship|effect|improvement|increase|reduction|"
    r"decrease|benefit|impact|influence|link|role|predictor|risk)"
)
_CONCLUSION_NO = re.compile(
    rf"\bno\s+(?:statistically\s+)?(?:significant\s+|clear\s+|meaningful\s+|independent\s+)?"
    rf"{_POSITIVE_EFFECT}"
    r"|\bnot\s+(?:statistically\s+)?significantly\b|\b(?:was|were|is|are)\s+not\s+(?:significantly\s+)?"
    r"(?:associated|correlated|related|linked|different|effective|predictive|improved|beneficial)\b"
    r"|\b(?:did|does|do)\s+not\s+(?:significantly\s+)?(?:differ|find|show|demonstrate|affect|"
    r"influence|improve|predict|reduce|increase|change|alter|matter)\b"
    r"|\bfail(?:s|ed)?\s+to\s+(?:show|demonstrate|find|detect|improve|reduce|increase|"
    r"predict|influence|affect|change)\b"
    r"|\bnot\s+(?:a\s+)?(?:significant\s+)?(?:risk\s+factor|predictor)\b",
    re.I,
)
_CONCLUSION_YES = re.compile(
    rf"\b(?:a\s+)?(?:statistically\s+)?significant(?:ly)?\s+(?:{_POSITIVE_EFFECT}|associated|"
    r"correlated|related|improved|reduced|increased|decreased|higher|lower|better|worse|"
    r"different)"
    r"|\b(?:study|studies|results?|data|findings|analysis|evidence|trial)\s+(?:clearly\s+)?"
    r"(?:demonstrates?|shows?|confirms?|supports?|indicates?|suggests?|establish(?:es)?)\s+"
    r"(?:that|a|an)\b(?![^.]*\b(?:no|not|neither)\b)"
    r"|\b(?:is|are|was|were)\s+(?:independently\s+|strongly\s+)?(?:associated|correlated)\s+with\b"
    r"|\b(?:is|are)\s+an?\s+(?:independent\s+|significant\s+|important\s+)?(?:risk\s+factor|"
    r"predictor)\b",
    re.I,
)
_SAMENESS = re.compile(
    r"\b(?:similar|same|equivalent|comparable|equal|non-?inferior|as\s+(?:good|effective|safe))\b",
    re.I,
)
_DIFFERENCE = re.compile(r"\bdiffer(?:ence|ent|s)?\b", re.I)


def affirmations_as_certainly(text: str) -> str:
    """ "There is no doubt that it is present" → "certainly it is present"."""
    return _NO_DOUBT.sub("certainly", text)


def study_conclusion(text: str, question: str) -> str | None:
    """yes/no from a study's conclusion, or None when there is none or both readings."""
    readings = set()
    negative = _CONCLUSION_NO.search(text)
    if negative:
        readings.add("no")
    if _CONCLUSION_YES.search(_CONCLUSION_NO.sub(" ", text)):
        readings.add("yes")
    if len(readings) != 1:
        return None
    if difference_against_sameness(text, question):
        return None
    return readings.pop()


def difference_against_sameness(text: str, question: str) -> bool:
    """A statement about a difference answering a question about sameness: "no difference"
    means yes to "Are the outcomes similar?", so presence/absence cues would read it backwards."""
    return bool(_SAMENESS.search(question) and _DIFFERENCE.search(text))


def _content_words(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 1]


def _stem(word: str) -> str:
    word = word.replace("’", "'")
    for suffix in ("'s", "es", "s", "ed", "ing"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    if len(word) == 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]  # "ribs" restates "rib"
    return word


_CLAUSE = re.compile(
    r"[,;:()]|\s[-–—]\s|\b(?:but|however|whereas|while|although|though|yet|except)\b", re.I
)


def restatement(text: str, question: str) -> str | None:
    """yes when a clause of `text` says the question's proposition, no when it negates it.

    The clause holding most of the question's content words decides; a hedge in it, two such
    clauses that disagree, or too few content words leave it unread (None).
    """
    wanted = set(_content_words(question)) - {_stem(w) for w in _NEGATION | _HEDGE}
    if not wanted:
        return None
    question_negated = bool(_words(question) & _NEGATION)
    best = 0
    readings: set[str | None] = set()
    for clause in _CLAUSE.split(text):
        words = _words(clause)
        said = len(wanted & {_stem(w) for w in words})
        if said < RESTATED_SHARE * len(wanted) or said < best:
            continue
        if said > best:
            best, readings = said, set()
        if words & _HEDGE:
            readings.add(None)
            continue
        negated = bool(words & _NEGATION) or "n't" in clause.lower().replace("’", "'")
        readings.add("no" if negated != question_negated else "yes")
    return readings.pop() if len(readings) == 1 else None


def _words(text: str) -> set[str]:
    return {w.lower().replace("’", "'") for w in _WORD.findall(text)}
