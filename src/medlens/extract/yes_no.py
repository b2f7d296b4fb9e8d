"""Yes/no and yes/no/maybe (PubMedQA) answers: containers → leading word → statements → refusal.

Two-way items with an English question read statements against the question's proposition
(``polarity``): "There is no abnormality." is yes to "Does the liver look normal?", no to "Is
there an abnormality?" and nothing to "Is there a mass?"; hedges ("can't rule out", "may
represent") are never yes or no, and a leading "Yes"/"No" that its own sentence hedges, or that
a statement about the question contradicts, is unread. A leading "No" that is a determiner ("No
abnormality is seen.") is a statement, not the word no. Three-way items (PubMedQA) and Chinese
questions read presence/absence cues and study conclusions.

A "maybe" reading is an answer only on three-way items; on two-way items it is a hedge and
stays ``unparsed``. Statements that support both readings are ``unparsed``, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlens.extract.choice import extract_choice
from medlens.extract.containers import Span, container_levels, normalize_output, sentences
from medlens.extract.extraction import Extraction
from medlens.extract.polarity import hedges, read_statement, readable
from medlens.extract.propositions import (
    affirmations_as_certainly,
    difference_against_sameness,
    restatement,
    study_conclusion,
)
from medlens.extract.refusal import is_refusal

_WORD = re.compile(
    r"^[\s\"'“”(\[:=\-]*(?:(?:absolutely|definitely|certainly|clearly)\s+)?(?:"
    r"(?P<maybe>maybe|possibly|perhaps|uncertain|unclear|not\s+sure|not\s+certain|unknown|"
    r"not\s+necessarily|"
    r"inconclusive|可能|也许|或许|不确定|不一定|无法确定|不能确定|尚不清楚|不清楚)"
    r"|(?P<no>no(?!\s+doubt)|nope|i\s+(?:don['’]t|do\s+not)\s+think\s+so|"
    r"not|false|negative|incorrect|absent|不是|不对|不存在|没有|不|否|无|错)"
    r"|(?P<yes>yes|yeah|yep|true|positive|correct|affirmative|present|是的|存在|正确|(?:是|有|对)(?=[的，,。.!！\s]|$))"
    r")(?![a-z])",
    re.I,
)
_BOTH = re.compile(r"^\W*(?:yes|no|maybe)\s*(?:and|or|/)\s*(?:yes|no|maybe)\b", re.I)

_NO_CUES = re.compile(
    r"\bno\s+(?:\w+\s+){0,2}?(?:evidence|signs?|indication|findings?|features?)\s+(?:of|for|to)\b"
    r"|\bthere\s+(?:is|are|was|were)\s+no\b|\bthere\s+(?:is|are)n['’]t\b"
    r"|\bno\s+(?:\w+\s+){1,3}?(?:is|are|was|were)\s+(?:seen|present|visible|identified|noted|"
    r"detected|observed|demonstrated)\b"
    r"|\b(?:is|are|was|were)\s+not\s+(?:\w+\s+)?(?:present|seen|visible|evident|identified|"
    r"observed|noted|detected|shown|demonstrated|apparent)\b"
    r"|(?<!\bI )(?<!\bwe )\b(?:does|do|did)\s*(?:not|n['’]t)\s+(?:show|have|demonstrate|reveal|contain|appear\s+to|"
    r"suggest|support|indicate|exhibit|involve|affect|improve|increase|reduce|correlate)\b"
    r"|\b(?:don't|don’t|do\s+not|can't|can’t|cannot)\s+see\s+(?:any|an?)\b"
    r"|\bnegative\s+for\b|\babsence\s+of\b|\b(?:is|are)\s+absent\b|\bwithout\s+(?:any\s+)?"
    r"(?:evidence|signs?)\s+of\b|\brules?\s+out\b"
    r"|没有|未见|未发现|不存在|无明显|无证据",
    re.I,
)
_YES_CUES = re.compile(
    r"\bthere\s+(?:is|are|was|were)\s+(?:a|an|evidence|signs?|multiple|several|some|clear|"
    r"significant|mild|moderate|severe|extensive|\d+)\b"
    r"|\b(?:is|are|was|were)\s+(?:clearly\s+|also\s+)?(?:present|seen|visible|evident|identified|"
    r"observed|noted|detected|shown|demonstrated|apparent)\b"
    r"|\b(?:shows?|showing|demonstrates?|reveals?|displays?)\s+(?:clear\s+)?(?:evidence|signs?|"
    r"findings?)\s+(?:of|for)\b|\bpositive\s+for\b"
    r"|\b(?:shows?|showing|demonstrates?|reveals?|displays?|confirms?)\s+(?:this|that|the|such\s+an?)"
    r"\s+(?:finding|abnormality|feature|appearance)\b"
    r"|可见|存在(?!.*不)|显示有|提示有",
    re.I,
)
_MAYBE_CUES = re.compile(
    r"\b(?:maybe|possibly|perhaps|uncertain|unclear|inconclusive|equivocal|indeterminate)\b"
    r"|\binsufficient\s+(?:evidence|data)\b|\bcannot\s+be\s+(?:determined|concluded|"
    r"definitively)|\bmay\s+or\s+may\s+not\b|\bnot\s+(?:sure|certain|clear)\b|\bmixed\s+"
    r"(?:evidence|results|findings)\b|\bremains\s+(?:unclear|controversial|uncertain)\b"
    r"|可能|也许|或许|不确定|尚不清楚|无法确定",
    re.I,
)
_ANSWER_WORD = re.compile(r"\b(yes|no)\b(?=\s*(?:[.!,;)]|$))", re.I)
_DECLINED = (None, "declined")
_POLAR_TEXTS = {"yes": "yes", "no": "no", "maybe": "maybe"}


def extract_yes_no(
    options: Mapping[str, str], text: str, three_way: bool, question: str = ""
) -> Extraction:
    """Read ``yes``/``no`` (or ``maybe`` when `three_way`) from a model output; `question`
    lets a restatement of its proposition ("There is narrowing of …") be read."""
    cleaned = normalize_output(text)
    if not cleaned:
        return Extraction(None, "empty", "empty")
    lettered = _from_letter_options(options, cleaned)
    if lettered is not None:
        return lettered
    against = not three_way and readable(question) and readable(cleaned)
    rules = _AGAINST_QUESTION if against else _BY_CUES
    for rule in rules:
        found = rule(cleaned, question)
        if found == _DECLINED:
            return Extraction(None, "refused", "refusal")
        if found is not None:
            return _decide(*found, three_way=three_way)
    if is_refusal(cleaned):
        return Extraction(None, "refused", "refusal")
    return Extraction(None, "unparsed", "no_answer_found")


def _decide(answer: str | None, method: str, *, three_way: bool) -> Extraction:
    if answer is None:
        reason = method if ":" in method else f"{method}:ambiguous"
        return Extraction(None, "unparsed", reason)
    if answer == "maybe" and not three_way:
        return Extraction(None, "unparsed", f"{method}:hedge")
    return Extraction(answer, "ok", method)


def _from_letter_options(options: Mapping[str, str], text: str) -> Extraction | None:
    """Items that present yes/no as lettered options ("A. Yes  B. No") answered by letter."""
    polar = {k: _POLAR_TEXTS.get(v.strip().lower().rstrip(".")) for k, v in options.items()}
    if not options or None in polar.values():
        return None
    found = extract_choice(options, text, multi=False)
    if found.status != "ok" or found.answer is None:
        return None
    return Extraction(polar[found.answer], "ok", f"option:{found.method}")


def read_polar_word(span: str) -> str | None:
    """yes/no/maybe named at the start of `span`, or None ("No abnormality" names none)."""
    if _BOTH.match(span):
        return None
    match = _WORD.match(span)
    if match is None:
        return None
    if (
        match.group("no")
        and match.group("no").lower() == "no"
        and _DETERMINER.match(span, match.end())
    ):
        return None
    return next(name for name in ("maybe", "no", "yes") if match.group(name))


_DETERMINER = re.compile(
    r"\s+(?!(?:it|there|the|this|that|these|those|i|we|they|he|she|its|their|you|not|sir|as|"
    r"but|and|or|definitely|absolutely|certainly|none|nothing|thanks|no)\b)[a-z]",
    re.I,
)
"""After "No": a word that makes it a determiner ("No abnormality", "No evidence of …")."""


def _from_containers(text: str, question: str = "") -> tuple[str | None, str] | None:
    found = _container_word(text)
    return None if found is None else (found[0], found[1].method)


def _container_word(text: str) -> tuple[str, Span] | None:
    """The polar word of the most trusted container that holds one, and its span."""
    for level in container_levels(text):
        for span in reversed(level):
            word = read_polar_word(span.text)
            if word is not None:
                return word, span
    return None


def _from_leading_word(text: str, question: str = "") -> tuple[str | None, str] | None:
    """A leading "Yes, …", "No.", "Maybe", "是的", "没有"; "Yes and no" is ambiguous."""
    if _BOTH.match(text):
        return None, "leading_word"
    word = read_polar_word(text)
    if word is None:
        return None
    first = sentences(text)[0]
    if word == "no" and is_refusal(first) and not _NO_CUES.search(first):
        return _DECLINED  # "No, I cannot tell from this image" declines rather than answers
    return word, "leading_word"


def _from_statements(text: str, question: str = "") -> tuple[str | None, str] | None:
    """Presence/absence statements and a standalone closing yes/no, all of which must agree."""
    text = affirmations_as_certainly(text)
    if difference_against_sameness(text, question):
        return None, "statement"
    readings = set()
    if _NO_CUES.search(text):
        readings.add("no")
    if _YES_CUES.search(_NO_CUES.sub(" ", text)):
        readings.add("yes")
    readings.update(word.lower() for word in _ANSWER_WORD.findall(text))
    if _MAYBE_CUES.search(text):  # "unclear whether there is a fracture" is no "yes"
        readings.add("maybe")
    if not readings:
        return None
    return (readings.pop() if len(readings) == 1 else None), "statement"


def _against_question(text: str, question: str) -> tuple[str | None, str] | None:
    """A study's conclusion (PubMedQA), else a restatement or negation of the question."""
    text = affirmations_as_certainly(text)
    if _MAYBE_CUES.search(text):
        return None
    concluded = study_conclusion(text, question)
    if concluded is not None:
        return concluded, "conclusion"
    restated = restatement(text, question) if question else None
    return (restated, "restatement") if restated is not None else None


def _from_container_checked(text: str, question: str) -> tuple[str | None, str] | None:
    """A container's yes/no, unless the container hedges it ("Answer: yes, possibly")."""
    found = _container_word(text)
    if found is None:
        return None
    word, span = found
    hedged = hedges(span.text, question)
    return (None, f"{span.method}:hedge") if hedged else (word, span.method)


def _from_leading_word_checked(text: str, question: str) -> tuple[str | None, str] | None:
    """A leading yes/no, unless its own sentence hedges it or a statement about the question
    says the opposite ("Yes, there is no abnormality." to "Is there an abnormality?")."""
    found = _from_leading_word(text, question)
    if found is None or found == _DECLINED or found[0] is None or found[0] == "maybe":
        return found
    if hedges(sentences(text)[0], question):
        return None, "leading_word:hedge"
    stated = read_statement(text, question)
    if stated.answer is not None and stated.answer != found[0]:
        return None, "leading_word:contradicted"
    return found


def _from_polarity(text: str, question: str) -> tuple[str | None, str] | None:
    """Statements read against the question's proposition (``polarity``)."""
    reading = read_statement(affirmations_as_certainly(text), question)
    if reading.reason in ("hedge", "conflict"):
        return None, f"statement:{reading.reason}"
    said = {word.lower() for word in _ANSWER_WORD.findall(text)}  # "… So, no."
    if reading.answer is not None:
        said.add(reading.answer)
    if not said:
        return None
    return (said.pop() if len(said) == 1 else None), "statement"


_BY_CUES = (_from_containers, _from_leading_word, _from_statements, _against_question)
_AGAINST_QUESTION = (_from_container_checked, _from_leading_word_checked, _from_polarity)
