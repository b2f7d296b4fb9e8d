"""Single- and multi-answer multiple choice: a hierarchy of deterministic rules.

Order (the first rule that reads something decides): explicit containers (boxed, answer tag,
JSON, "Final answer", "The answer is", "I would choose", 答案是/选) → an option declared correct
("C is correct") → the concluding statement ("Therefore, …") → a leading letter or one option per
line → option mentions anywhere (letter references and option texts, negation-aware).
Two answers to a single-answer item, or a hedge ("B or C"), is ``unparsed``: never a guess.
Written by hand because no maintained library parses free-text MCQ answers; the rules follow
what a careful reader does, and every rule is named in ``Extraction.method``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlens.extract.conclusions import (
    concluding_sentence,
    echoes_options,
    hedged,
    negative_question,
)
from medlens.extract.containers import container_levels, normalize_output
from medlens.extract.extraction import Extraction
from medlens.extract.letters import (
    LETTER,
    SPAN_PREFIX,
    Reading,
    letters_at_start,
    paraphrased_option,
    read_span,
)
from medlens.extract.mentions import Mention, find_mentions, negated_after, positive_letters
from medlens.extract.option_lines import (
    DELIMITED,
    closing_option_line,
    is_bare_line,
    line_letter,
    reviews_options,
)
from medlens.extract.refusal import is_refusal

_BARE = re.compile(r"^[(\[]?([A-Za-z])[)\]]?[.!]?$")
_ONLY_POSSIBLE = re.compile(
    r"\s*(?:are|is|seem|seems|would\s+be|could\s+be|might\s+be|may\s+be)\s+(?:both\s+|all\s+)?"
    r"(?:possible|plausible|possibilities|considerations)\b",
    re.I,
)
"""Letters offered as possibilities ("Both B and C are possible") are a hedge, not an answer."""
_BULLET = re.compile(r"^(?:[-*•]\s+|\d+[.)]\s+)")
_CLOSING_LETTER = re.compile(r"(?:[:：?？]|\b(?:is|be|was|are)\b)\s*[(\[]?([A-Z])[)\]]?[.!。]?\s*$")
"""A closing "…based on the image: B", "… so the treatment is B." or "…in this patient? A"
(the question restated, then its answer) states the answer last."""


def extract_choice(
    options: Mapping[str, str], text: str, multi: bool, question: str = ""
) -> Extraction:
    """Read a letter (or, with `multi`, a sorted set of letters) from a model output to
    `question` (whose polarity decides what a negation after a leading answer means)."""
    cleaned = normalize_output(text)
    if not cleaned:
        return Extraction(None, "empty", "empty")
    bare = _BARE.match(cleaned)
    if bare and bare.group(1).upper() in options:  # the common case, without the hierarchy
        return Extraction(bare.group(1).upper(), "ok", "bare_letter")
    negative = negative_question(question)
    found = _from_containers(cleaned, options, multi)
    if found is None and not (negative and not _NAMES_AN_ANSWER.search(cleaned)):
        found = _from_affirmation(cleaned, options, multi)  # "C: Yes, it can" answers no NOT
    if found is None:
        found = _from_conclusion(cleaned, options, multi, negative)
    if found is None:
        found = _from_leading(cleaned, options, multi, negative)
    if found is not None:
        return found
    if echoes_options(cleaned, options):  # the options listed on a line: none chosen
        return Extraction(None, "unparsed", "echoed_options")
    found = _from_mentions(cleaned, options, multi, negative)
    if found is not None and found.status == "ok":
        return found
    if is_refusal(cleaned):
        return Extraction(None, "refused", "refusal")
    return found or _short_paraphrase(cleaned, options)


_SHORT_ANSWER = 12
"""Words of an output that is only its answer ("increased stiffness of the ventricular wall")."""
_QUALIFIED = re.compile(
    r"\b(?:not|no|never|without|unlikely|except|or|possibl[ey]|probabl[ey]|maybe|perhaps|"
    r"might|may|could)\b|n['’]t\b|\?",
    re.I,
)


def _short_paraphrase(text: str, options: Mapping[str, str]) -> Extraction:
    """An output that is only a short unqualified phrase saying every content word of exactly
    one option, in any order or form, answers by it; anything else names no option."""
    if len(text.split()) <= _SHORT_ANSWER and "\n" not in text.strip():
        letter = None if _QUALIFIED.search(text) else paraphrased_option(text, options)
        if letter is not None:
            return Extraction(letter, "ok", "paraphrased_option")
    return Extraction(None, "unparsed", "no_answer_found")


def _decide(reading: Reading, method: str, multi: bool) -> Extraction:
    if not reading.letters:
        return Extraction(None, "unparsed", f"{method}:not_an_option:{reading.foreign}")
    if reading.contradicted:
        return Extraction(None, "unparsed", f"{method}:contradicted")
    if reading.hedged or (len(set(reading.letters)) > 1 and not multi):
        return Extraction(None, "unparsed", f"{method}:ambiguous")
    return Extraction("".join(sorted(set(reading.letters))), "ok", method)


def _from_containers(text: str, options: Mapping[str, str], multi: bool) -> Extraction | None:
    """The last readable span of the most trusted container level (a restated answer wins)."""
    for level in container_levels(text):
        for span in reversed(level):
            reading = read_span(span.text, options)
            if reading is not None:
                return _decide(reading, span.method, multi)
    return None


def _from_affirmation(text: str, options: Mapping[str, str], multi: bool) -> Extraction | None:
    """Options the output declares correct: "Option C is correct", "Drusen is the best answer"."""
    if text.isascii() and not any(word in text.lower() for word in AFFIRMING_WORDS):
        return None  # nothing can be affirmed: the mentions need not be found (see below)
    return affirmed_by_mentions(text, options, multi)


AFFIRMING_WORDS = ("correct", "right", "best", "true", "most", "answer", "my", "yes")
"""One of these occurs after every affirmed mention (``mentions._POST_AFFIRMATION``: "… is
correct", "… is my answer", ": yes"; the rest of its words are Chinese), so ASCII text without
any of them affirms no option (``re.I`` folds nothing else onto ASCII letters)."""


def affirmed_by_mentions(text: str, options: Mapping[str, str], multi: bool) -> Extraction | None:
    """:func:`_from_affirmation` read from every option mention."""
    letters = positive_letters(mentions_of(text, options), affirmed_only=True)
    return _decide(Reading(tuple(sorted(letters))), "affirmed_option", multi) if letters else None


_last_mentions: tuple[str, Mapping[str, str], list[Mention]] | None = None


def mentions_of(text: str, options: Mapping[str, str]) -> list[Mention]:
    """``find_mentions(text, options)``, kept for the same two objects: the affirmation rule and
    the mention rule read the same output, which is searched once. (The kept objects cannot be
    freed, so another text or options dict never takes their identity.)"""
    global _last_mentions
    last = _last_mentions  # read once: another thread may replace it meanwhile
    if last is not None and last[0] is text and last[1] is options:
        return last[2]
    found = find_mentions(text, options)
    _last_mentions = (text, options, found)
    return found


def _from_conclusion(
    text: str, options: Mapping[str, str], multi: bool, negative: bool = False
) -> Extraction | None:
    """A closing ": B", else the last sentence that opens with a concluding phrase ("Therefore",
    "So", "Based on the findings,", "所以": ``conclusions``); a hedged one commits to nothing.
    To a `negative` question the one option it names is the answer, negated or not ("So, optic
    atrophy is not seen in Polypoidal choroidal vasculopathy (D).")."""
    closing = _CLOSING_LETTER.search(text.rstrip()[-24:])  # end-anchored: a short tail
    if closing and closing.group(1) in options:
        return Extraction(closing.group(1), "ok", "conclusion")
    last = closing_option_line(text, options)
    if last is not None:
        return Extraction(last, "ok", "conclusion")
    rest = concluding_sentence(text)
    if rest is None:
        return None
    bare = _BARE.match(rest.strip())
    if bare and bare.group(1) in options:
        return Extraction(bare.group(1), "ok", "conclusion")
    mentions = find_mentions(rest, options)
    letters = positive_letters(mentions)
    named = {mention.letter for mention in mentions}
    if negative and not letters and len(named) == 1:
        letters = named
    if letters and hedged(rest):
        return Extraction(None, "unparsed", "conclusion:hedge")
    if letters:
        return _decide(Reading(tuple(sorted(letters))), "conclusion", multi)
    return None


def _from_leading(
    text: str, options: Mapping[str, str], multi: bool, negative: bool = False
) -> Extraction | None:
    """An output that opens with its answer ("B. Diabetic retinopathy is …", "A, C"), or that
    lists the chosen options one per line. To a `negative` question ("Which is NOT …") the
    answer is said not to be so ("D) Carrion's disease is not transmitted by a mosquito.")."""
    lines = [_BULLET.sub("", line.strip()) for line in text.splitlines() if line.strip()]
    first = SPAN_PREFIX.sub("", lines[0], count=1)  # "Options B and D …", "Both A and C"
    listed = letters_at_start(first, options)
    if listed is None or not listed.letters:
        return None
    if not _opens_with_answer(first, listed) or echoes_options(text, options):
        return None
    if len(_LABELLED_QUESTION.findall(text)) >= 2:  # "B) What is …? D) What is …?"
        return Extraction(None, "unparsed", "labelled_questions")  # its own questions
    if listed.contradicted:  # "C) <option D's text>"
        return Extraction(None, "unparsed", "leading_letter:contradicted")
    if reviews_options(text) and _next_label(text, listed, options):
        return None  # "A) …: possible but less likely. B) …": the first entry of a review
    if not negative and negated_after(first[listed.end :]):
        # "C is incorrect. …" names C to reject it: only the other options can be the answer.
        rest = {letter: text for letter, text in options.items() if letter not in listed.letters}
        return _from_mentions(text, rest, multi) or Extraction(
            None, "unparsed", "leading_letter:negated"
        )
    if _ONLY_POSSIBLE.match(first, listed.end):
        return Extraction(None, "unparsed", "leading_letter:ambiguous")
    line_letters = [line_letter(line, options) for line in lines[1:]]
    later = {letter for letter in line_letters if letter}
    if not later:
        return _decide(listed, "leading_letter", multi)
    if all(line_letters) and all(is_bare_line(line, options) for line in lines):
        return _decide(Reading((*listed.letters, *sorted(later))), "option_lines", multi)
    return None


def _opens_with_answer(line: str, listed: Reading) -> bool:
    """The letter is bracketed, delimited or followed by its option text — not by a word:
    "A 45-year-old patient …" and "A normal fundus" are English, not option A."""
    token = LETTER.match(line)
    if len(listed.letters) > 1 or token is None:
        return True
    wrapped = bool(token.group(1) or token.group(3))
    return wrapped or listed.end > token.end() or bool(DELIMITED.match(line[token.end() :]))


_LABELLED_QUESTION = re.compile(
    r"(?:^|\s)(?-i:[A-Z])\)\s+(?:what|which|who|where|when|why|how|is|are|does|do)\b[^?\n]{0,200}\?",
    re.I,
)


def _next_label(text: str, listed: Reading, options: Mapping[str, str]) -> bool:
    """The option after the leading one is labelled later ("A) …: possible. B) …"), as an
    option-by-option review goes on."""
    order = list(options)
    place = order.index(listed.letters[-1]) + 1
    if place >= len(order):
        return False
    return re.search(rf"(?:^|\s)\(?{order[place]}[):]\s", text[listed.end :]) is not None


_NAMES_AN_ANSWER = re.compile(r"\b(?:correct|answer|best|my)\b", re.I)


def _from_mentions(
    text: str, options: Mapping[str, str], multi: bool, negative: bool = False
) -> Extraction | None:
    """Options mentioned anywhere and not negated; the weakest rule, so ambiguity is common.
    To a `negative` question the one option said not to be so is the answer ("the tests that
    should be done are … However, a lumbar puncture should not be done.")."""
    mentions = mentions_of(text, options)
    letters = positive_letters(mentions)
    if negative:
        refused = {m.letter for m in mentions} - letters
        if refused:
            return _decide(Reading(tuple(sorted(refused))), "negated_option", multi)
    if not letters:
        return None
    by_text_only = all(m.by_text for m in mentions if m.letter in letters)
    method = "option_text" if by_text_only else "option_mention"
    return _decide(Reading(tuple(sorted(letters))), method, multi)
