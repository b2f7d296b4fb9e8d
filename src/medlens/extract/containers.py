"""Output normalisation and explicit answer containers shared by every parser.

A container is a place where a model states its answer on purpose: ``\\boxed{}``, an
``<answer>`` tag, a JSON ``answer`` field, or a phrase such as "The answer is" / "答案是".
Each found container yields a :class:`Span` — the text the answer should be read from.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_BOLD_LETTER = re.compile(r"(\*\*|__)\s*\(?([A-Za-z])\)?\s*(\*\*|__)")
_MARKUP = re.compile(r"\*\*|__|`|^#+\s*", re.M)
_INVISIBLE = re.compile(r"[\u200b-\u200f\ufeff]")
_MARKS = ("<", "*", "_", "`", "#")
"""A character each of the patterns above needs (``<think>``, ``**``, ``__``, backticks, ``#``)."""


def without_reasoning(text: str) -> str:
    """`text` without invisible characters and reasoning blocks, otherwise as written (reports:
    markdown, width variants and MIMIC's "___" stay, as they stay in the reference)."""
    text = _INVISIBLE.sub("", text)
    without_thinking = _THINK.sub(" ", text).strip()
    return without_thinking or text.replace("<think>", " ").replace("</think>", " ").strip()


def normalize_output(text: str) -> str:
    """Fold width variants (NFKC: ``Ａ``→``A``, ``：``→``:``), drop invisible characters, reasoning
    blocks and markdown emphasis; ``**B**`` becomes ``(B)`` so it still reads as a letter."""
    if text.isascii() and not any(mark in text for mark in _MARKS):
        return text.strip()  # NFKC keeps ASCII, and none of the patterns below can match
    return normalized_by_patterns(text)


def normalized_by_patterns(text: str) -> str:
    """:func:`normalize_output` of any text, pattern by pattern."""
    text = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))
    without_thinking = _THINK.sub(" ", text).strip()
    # A reasoning model that only thought aloud still answered somewhere in its thoughts.
    text = without_thinking or text.replace("<think>", " ").replace("</think>", " ")
    text = _BOLD_LETTER.sub(r"(\2)", text)
    return _MARKUP.sub("", text).strip()


@dataclass(frozen=True)
class Span:
    """Text an explicit container points at, to be read by a kind-specific parser."""

    method: str
    """Container rule: ``boxed``, ``answer_tag``, ``json``, ``final_answer``, ``answer_phrase``,
    ``commitment`` ("the most likely cause is", "that leaves"), ``choose_phrase`` or
    ``zh_answer``."""
    text: str
    start: int


_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEX_WRAPPER = re.compile(r"\\(?:text|textbf|mathrm|mathbf)\s*\{([^{}]*)\}")
_TAG = re.compile(r"<(answer|final_answer)>\s*(.*?)\s*</\1>", re.S | re.I)
_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_JSON_LIST = re.compile(r"^\s*(?:json)?\s*(\[[^\[\]]*\])\s*$", re.I)
_JSON_KEYS = ("answer", "final_answer", "answers", "correct_answer", "choice", "option", "答案")
_LOOSE_JSON_ANSWER = re.compile(r"[\"']?(?:final_)?answer[\"']?\s*:\s*[\"']?([^\"'}\n]*)", re.I)

_FINAL = re.compile(r"\bfinal\s+answer\s*(?:is\b|would\s+be\b|:|=|-)?\s*:?", re.I)
_ANSWER_PHRASE = re.compile(
    # No "the correct"/"most likely" prefix: the span after the phrase is the same without it,
    # and a pattern that opens on a keyword scans long outputs several times faster.
    r"\b(?:answers?|options?|choices?|diagnosis|response|selection)\s+(?:is|are|would\s+be|"
    r"should\s+be|will\s+be|must\s+be|has\s+to\s+be|seems\s+to\s+be|appears\s+to\s+be|=)\b\s*:?"
    r"|\b(?:answer|ans)\s*(?:[:=]|-(?=\s))"
    r"|\banswer\s+(?=\(?[A-Z]\b)"
    r"|\banswer\s+to\s+(?:the|this|our)\s+(?:[\w-]+\s+){0,2}?question\s+(?:is|would\s+be)\b\s*:?",
    re.I,
)
_CHOOSE_PHRASE = re.compile(
    r"\b(?:I|we)\s*(?:would|'d|will|'ll|should|must|can(?:\s+only)?)?\s*(?:choose|select|pick|go\s+with|"
    r"opt\s+for|answer\s+with)\b\s*:?"
    r"|\bmy\s+(?:final\s+)?(?:answer|choice|pick)\s+(?:is|would\s+be)\b\s*:?"
    # "It's B", "I would say B": only before an upper-case letter ("it is a cyst" is English).
    r"|\b(?:it(?:'s|’s|\s+is|\s+would\s+be|\s+must\s+be|\s+should\s+be)|I\s+would\s+say|"
    r"I'd\s+say|I\s+(?:think|believe)\s+it(?:'s|’s|\s+is))\s+(?=(?-i:\(?[A-Z])\b)",
    re.I,
)
_LETTERED = r"(?:option\s+)?\(?(?-i:[A-Z])(?:[).:,]|\s*$)"
_COMMITMENT = re.compile(
    # "the most likely cause is: C)", "the best explanation is option C", "that leaves C": a
    # reasoning output's closing commitment, read like "the answer is".
    # "the mediator most likely responsible for the presence of neutrophils in the lung is E)":
    # up to ten words between the superlative and its verb, within the sentence.
    r"\b(?:most\s+(?:(?:commonly|frequently|widely)\s+)?(?:likely|probable|appropriate|accurate|"
    r"consistent|common|important|suitable|effective|useful|indicated|avoided|used|performed|"
    r"recommended|preferred)|best(?:-\w+)?|likeliest|strongest|greatest|correct|underlying)"
    r"\s+(?:[\w'’-]+\s+){0,10}?(?:is|are|would\s+be|=)\b\s*:?"
    r"|\b(?:that|this|which)\s+leaves(?:\s+(?:us\s+with|only))?\b\s*:?"
    # "The test that should not be done in this situation is B) …", "The one that does not
    # increase the risk … is option A", "… most closely described by B) First pass effect":
    # only before a lettered option.
    r"|\b(?:that|which)\s+(?:[\w'’-]+\s+){0,14}?(?:is|are)\s*:?\s*(?=" + _LETTERED + ")"
    r"|\b(?:described|represented|explained|matched)\s+by\s*(?=" + _LETTERED + ")",
    re.I,
)
_ZH_ANSWER = re.compile(
    r"(?:最终|正确|最佳)?答案\s*(?:应该|应)?\s*(?:是|为|:|选)\s*"
    r"|(?:最终|正确|最佳)?答案\s*(?=[(\[]?[A-Za-z](?![A-Za-z]))"  # "答案C"
    r"|(?:应该|应当|应|故|所以|因此|我|则)?选(?:择)?\s*(?=[(\[]?[A-Za-z])"
    r"|正确(?:的)?选项(?:是|为|:)?\s*|(?:我认为|我觉得|应该|应当)(?:是|选)?\s*(?=[(\[]?[A-Za-z])"
)
_SPAN_END = re.compile(r"\n")

_PHRASE_RULES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("final_answer", _FINAL, ("final",)),
    (
        "answer_phrase",
        _ANSWER_PHRASE,
        ("answer", "ans", "option", "choice", "diagnosis", "response", "selection"),
    ),
    (
        "commitment",
        _COMMITMENT,
        (
            "most",
            "best",
            "likeliest",
            "strongest",
            "greatest",
            "correct",
            "underlying",
            "leaves",
            "that",
            "which",
            "described",
            "represented",
            "explained",
            "matched",
        ),
    ),
    (
        "choose_phrase",
        _CHOOSE_PHRASE,
        ("choose", "select", "pick", "go with", "opt for", "answer", "my ", "it", "say"),
    ),
    ("zh_answer", _ZH_ANSWER, ("答案", "选", "认为", "觉得", "应")),
)
"""(method, pattern, words one of which must occur): the words skip a regex scan of long
chain-of-thought outputs that cannot match, which is most of extraction time."""

_WORD_GATES = {words: re.compile("|".join(map(re.escape, words))) for _, _, words in _PHRASE_RULES}
"""Each rule's words as one search (a literal alternation, scanned at C speed)."""

_PHRASE_STARTS: dict[str, re.Pattern[str]] = {
    method: re.compile(r"\b(?:" + words.replace(" ", "|") + ")")
    for method, words in (
        ("final_answer", "final"),
        ("answer_phrase", "ans option choice diagnosis response selection"),
        (
            "commitment",
            "most best likeliest strongest greatest correct underlying that this which described "
            "represented explained matched",
        ),
        ("choose_phrase", "i my we"),
    )
}
"""Where a match of a rule's pattern can start, in lower-cased text: each alternative of the
pattern opens with ``\b`` and one of these words (``I`` and ``it`` both open on ``i``). In ASCII
text the pattern is tried only there (:func:`rule_matches`), not at every character."""


def container_levels(text: str) -> list[list[Span]]:
    """Containers by decreasing trust; within a level, spans in text order (readers try the last)."""
    levels = [_boxed(text), _tags(text), _json_spans(text), _phrases(text, _PHRASE_RULES[:1])]
    levels.append(_phrases(text, _PHRASE_RULES[1:]))
    return [level for level in levels if level]


def _boxed(text: str) -> list[Span]:
    spans = []
    for match in _BOXED.finditer(text):
        content = match.group(1)
        while _TEX_WRAPPER.search(content):
            content = _TEX_WRAPPER.sub(r"\1", content)
        spans.append(Span("boxed", content.strip(), match.start()))
    return spans


def _tags(text: str) -> list[Span]:
    return [Span("answer_tag", m.group(2), m.start()) for m in _TAG.finditer(text)]


def _json_spans(text: str) -> list[Span]:
    """``answer`` fields of JSON objects (fenced or inline), or a bare JSON list of letters."""
    spans = []
    for match in _JSON_OBJECT.finditer(text):
        value = _answer_field(match.group(0))
        if value is not None:
            spans.append(Span("json", value, match.start()))
    listed = _JSON_LIST.match(text)
    if not spans and listed:
        value = _json_value_text(_loads(listed.group(1)))
        if value is not None:
            spans.append(Span("json", value, listed.start(1)))
    return spans


def _answer_field(candidate: str) -> str | None:
    data = _loads(candidate)
    if isinstance(data, dict):
        for key, value in data.items():
            if str(key).strip().lower() in _JSON_KEYS:
                return _json_value_text(value)
        return None
    # Almost-JSON ({answer: B}, single quotes) is still an answer field a reader recognises.
    loose = _LOOSE_JSON_ANSWER.search(candidate)
    return loose.group(1).strip() if loose else None


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except ValueError:
        try:
            return json.loads(candidate.replace("'", '"'))
        except ValueError:
            return None


def _json_value_text(value: Any) -> str | None:
    if isinstance(value, list):
        parts = [str(v) for v in value if isinstance(v, (str, int, float, bool))]
        return ", ".join(parts) if parts else None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def _phrases(
    text: str, rules: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]
) -> list[Span]:
    spans = []
    lowered = text.lower()
    for method, pattern, words in rules:
        if not _WORD_GATES[words].search(lowered):  # any(word in lowered for word in words)
            continue
        for match in rule_matches(text, lowered, pattern, _PHRASE_STARTS.get(method)):
            end = _SPAN_END.search(text, match.end())
            stop = end.start() if end and end.start() > match.end() else len(text)
            spans.append(
                Span(method, text[match.end() : min(stop, match.end() + 300)], match.start())
            )
    return sorted(spans, key=lambda span: span.start)


def rule_matches(
    text: str, lowered: str, pattern: re.Pattern[str], starts: re.Pattern[str] | None
) -> list[re.Match[str]]:
    """``list(pattern.finditer(text))``, found by trying the pattern only where `starts` finds a
    word in `lowered` (``text.lower()``) when `text` is ASCII (lower-casing keeps every position
    and word boundary, and ``re.I`` folds no other character onto an ASCII letter); by a scan of
    every position otherwise.

    The same matches: every match opens on a word `starts` finds (a word inside another cannot
    follow a word boundary, so the words' own non-overlapping scan misses none), and ``finditer``
    returns, after each match, the first position at or past its end where the pattern matches.
    ``tests/extract/test_fast_paths.py`` checks this against ``finditer`` on real and fuzzed text.
    """
    if starts is None or not text.isascii():
        return list(pattern.finditer(text))
    found: list[re.Match[str]] = []
    end = 0
    for start in starts.finditer(lowered):
        if start.start() < end:
            continue
        match = pattern.match(text, start.start())
        if match is not None:
            found.append(match)
            end = match.end()
    return found


_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？;；])\s+|(?<=[。！？；])|\n+")


def sentences(text: str) -> list[str]:
    """Sentences and lines, stripped, empty ones dropped."""
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]
