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
from dataclasses import dataclass

from medlens.extract.conclusions import (
    concluding_sentence,
    echoes_options,
    hedged,
    negative_question,
)
from medlens.extract.containers import container_levels, normalize_output, sentences
from medlens.extract.extraction import Extraction
from medlens.extract.mentions import Mention, find_mentions, negated_after, positive_letters
from medlens.extract.option_lines import (
    DELIMITED,
    closing_option_line,
    is_bare_line,
    line_letter,
)
from medlens.extract.propositions import _stem
from medlens.extract.refusal import is_refusal


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


_BARE = re.compile(r"^[(\[]?([A-Za-z])[)\]]?[.!]?$")
_SPAN_PREFIX = re.compile(
    r"^[\s*\"'“”‘’`:=>\-–—]*(?:either\s+|both\s+|(?:most\s+)?(?:probably|likely)\s+|clearly\s+)?"
    r"(?:(?:the\s+)?(?:options?|choices?|letter|answers?)\s*[:：]?\s*|选项\s*)?",
    re.I,
)
_SPAN_NEGATED = re.compile(r"^(?:not|never|neither|none\s+of)\b|^不", re.I)
_LETTER = re.compile(r"([(\[]?)([A-Za-z])([)\]]?)(?![A-Za-z0-9'’_])(?!-[A-Za-z0-9])")
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
    return found or Extraction(None, "unparsed", "no_answer_found")


def _decide(reading: Reading, method: str, multi: bool) -> Extraction:
    if not reading.letters:
        return Extraction(None, "unparsed", f"{method}:not_an_option:{reading.foreign}")
    if reading.hedged or (len(reading.letters) > 1 and not multi):
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


def read_span(span: str, options: Mapping[str, str]) -> Reading | None:
    """Letters named at the start of a container's text, else the option it starts with."""
    body = _SPAN_PREFIX.sub("", span, count=1).strip()
    if not body or _SPAN_NEGATED.match(body):
        return None
    exact = _option_with_text(body.rstrip(".。!"), options)
    if exact:
        return Reading((exact,))
    listed = _letters_at_start(body, options)
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


def _option_with_text(candidate: str, options: Mapping[str, str]) -> str | None:
    wanted = candidate.strip().lower()
    for letter, option in options.items():
        if option.strip().lower().rstrip(".") == wanted:
            return letter
    return None


def _letters_at_start(body: str, options: Mapping[str, str]) -> Reading | None:
    """A letter list, or packed letters ("AC", every one an option) at the start of `body`."""
    packed = _PACKED.match(body)
    if packed and set(packed.group(1)) <= set(options) and len(set(packed.group(1))) > 1:
        return Reading(tuple(packed.group(1)), end=packed.end())
    return _letter_list(body, options)


def _letter_list(body: str, options: Mapping[str, str]) -> Reading | None:
    """``B``, ``(c)``, ``A, C``, ``A and C``, ``A/C``, ``B or C``, ``B. Option text`` at the start."""
    letters: list[str] = []
    hedged, position = False, 0
    while True:
        match = _LETTER.match(body, position)
        if match is None or not _is_letter_token(body, match, options):
            break
        letter = match.group(2).upper()
        if letter not in options:
            return Reading((), foreign=letter) if not letters and letter.isupper() else None
        letters.append(letter)
        position = _skip_option_text(body, match.end(), options[letter], match.group(2))
        joint = _SEPARATOR.match(body, position)
        if joint is None or _LETTER.match(body, joint.end()) is None:
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
    first = _SPAN_PREFIX.sub("", lines[0], count=1)  # "Options B and D …", "Both A and C"
    listed = _letters_at_start(first, options)
    if listed is None or not listed.letters:
        return None
    if not _opens_with_answer(first, listed) or echoes_options(text, options):
        return None
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
    token = _LETTER.match(line)
    if len(listed.letters) > 1 or token is None:
        return True
    wrapped = bool(token.group(1) or token.group(3))
    return wrapped or listed.end > token.end() or bool(DELIMITED.match(line[token.end() :]))


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
