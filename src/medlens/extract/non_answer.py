"""Outputs that commit to nothing: questions asked back, file names, timestamps, chat
boilerplate, and outputs cut off mid-sentence. None of them may carry a polarity or an option.

- **Boilerplate** (``<image>`` markers, "ASSISTANT:" / "### Response:" role labels) is dropped;
  an output that was only boilerplate is ``empty`` (method ``boilerplate``).
- **Questions back** ("Could you provide the image?", "What do you mean by …?"): an output whose
  every sentence is a question is ``unparsed`` (``non_answer:question``); question sentences
  beside an answer are dropped before reading ("Is there a mass? Yes, there is.").
- **File names, timestamps, URLs** ("synpic42202.jpg", "2023-05-01 12:30") with no other
  word: ``unparsed`` (``non_answer:file_name`` / ``timestamp``).
- **Truncated outputs**: cut at the token cap (``finish_reason == "length"``) or, for yes/no
  and lettered answers, visibly cut (ending on "of", "the", "and", a comma …): the unfinished
  last sentence is dropped and the rest read; nothing left is ``unparsed`` (``truncated``).
"""

from __future__ import annotations

import re

from medlens.extract.containers import sentences
from medlens.extract.extraction import Extraction

_BOILERPLATE = re.compile(
    r"<image>|<\|?im_(?:start|end)\|?>|</?s>|^\s*(?:###\s*)?(?:assistant|gpt|response|"
    r"answer\s+the\s+question)\s*:\s*$|^\s*(?:###\s*)?(?:assistant|gpt|response)\s*:",
    re.I | re.M,
)
_FILE_NAME = re.compile(
    r"\b[\w\-./\\]+\.(?:jpe?g|png|gif|bmp|tiff?|dcm|dicom|nii(?:\.gz)?|nrrd|svs|json|txt|csv)\b",
    re.I,
)
_TIMESTAMP = re.compile(
    r"\b\d{4}[-/]\d{1,2}[-/]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
    r"|\b\d{1,2}:\d{2}(?::\d{2})?\s*(?:am|pm)?\b",
    re.I,
)
_URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+", re.I)
_LEFT_OVER = re.compile(r"[\W_]|\b(?:image|file|filename|name|date|time|timestamp|source)\b", re.I)
_DANGLING = re.compile(
    r"(?:\b(?:the|a|an|of|and|or|to|in|on|at|with|by|for|from|as|is|are|was|were|be|that|which|"
    r"than|but|because|since|shows?|showing|demonstrates?|reveals?|indicates?|suggests?|"
    r"consistent|these|its|their)|[,:;(\-–—])\s*$",
    re.I,
)


def without_boilerplate(text: str) -> str:
    if "<" not in text and ":" not in text:  # the common case, without a regex scan
        return text.strip()
    return _BOILERPLATE.sub(" ", text).strip()


_SHORT = 120
"""File names and timestamps are non-answers only when nothing else is said: short outputs."""


def non_answer(text: str) -> Extraction | None:
    """The reading of an output that commits to nothing, or None when it may hold an answer."""
    stripped = without_boilerplate(text)
    if not stripped:
        return Extraction(None, "empty", "boilerplate")
    if "?" in stripped or "？" in stripped:
        parts = sentences(stripped)
        if parts and all(is_question(part) for part in parts):
            return Extraction(None, "unparsed", "non_answer:question")
    if len(stripped) > _SHORT or not any(char in stripped for char in ".:/"):
        return None
    for kind, pattern in (("file_name", _FILE_NAME), ("timestamp", _TIMESTAMP), ("url", _URL)):
        if pattern.search(stripped) and not _LEFT_OVER.sub("", _scrub(stripped)):
            return Extraction(None, "unparsed", f"non_answer:{kind}")
    return None


def _scrub(text: str) -> str:
    for pattern in (_FILE_NAME, _TIMESTAMP, _URL):
        text = pattern.sub(" ", text)
    return text


_ASKING = re.compile(
    r"^\W*(?:what|which|who|whom|whose|where|when|why|how|could|can|would|will|do|does|did|is|"
    r"are|was|were|should|shall|may|might|have|has|had|am|please)\b|\byou\b|[吗呢]",
    re.I,
)


def is_question(sentence: str) -> bool:
    """A sentence that asks ("Could you share the image?"), not an answer with a question mark
    ("coronal plane?", as one VQA-RAD gold is written)."""
    return sentence.rstrip().endswith(("?", "？")) and _ASKING.search(sentence) is not None


def without_questions(text: str) -> str:
    """`text` without its question sentences (there is at least one other sentence)."""
    if "?" not in text and "？" not in text:
        return text
    parts = sentences(text)
    kept = [part for part in parts if not is_question(part)]
    return " ".join(kept) if kept and len(kept) < len(parts) else text


def is_cut(
    text: str, finish_reason: str | None = None, *, lettered: bool = False, by_text: bool = True
) -> bool:
    """Cut at the token cap mid-sentence, or (`by_text`) visibly cut: ending on "of", "the",
    "and", a comma … (with `lettered` options, not on "a"/"an": "… is a" may name option A).
    Open answers are not judged by their text (PathVQA's own answers end on "its", "and")."""
    if finish_reason == "length" and not text.rstrip().endswith((".", "!", "?", "。", ")", "}")):
        return True
    if not by_text:
        return False
    end = " " + text.rstrip()[-24:]  # end-anchored patterns: never scan a long output
    word = last_word(end)
    if not word.isascii():
        return dangles_by_patterns(end, lettered)
    word = word.lower()  # what the patterns find, without trying them at every position
    if lettered and word in ("a", "an"):
        return False
    return word in _DANGLING_WORDS or end[-1] in _DANGLING_MARKS


def dangles_by_patterns(end: str, lettered: bool) -> bool:
    """Whether `end` (an output's stripped end) stops on a word or mark that continues."""
    if lettered and re.search(r"\b(?:a|an)$", end, re.I):
        return False
    return _DANGLING.search(end) is not None


_DANGLING_WORDS = frozenset((
    "the", "a", "an", "of", "and", "or", "to", "in", "on", "at", "with", "by", "for", "from",
    "as", "is", "are", "was", "were", "be", "that", "which", "than", "but", "because", "since",
    "show", "shows", "showing", "demonstrate", "demonstrates", "reveal", "reveals", "indicate",
    "indicates", "suggest", "suggests", "consistent", "these", "its", "their",
))  # fmt: skip
"""The words of ``_DANGLING``: after ``rstrip`` its ``\\s*$`` is empty, so it matches exactly
when the trailing run of word characters is one of these (its ``\\b`` is the run's start) or
the last character one of ``_DANGLING_MARKS``; ``re.I`` folds like ``lower`` on ASCII words."""
_DANGLING_MARKS = frozenset(",:;(-–—")


def last_word(text: str) -> str:
    """The run of word characters (``\\w``: letters, digits, ``_``) `text` ends with."""
    start = len(text)
    while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    return text[start:]


def complete_part(text: str) -> str:
    """`text` without its unfinished last sentence ("" when it had only that one)."""
    parts = sentences(text)
    if len(parts) <= 1:
        return ""
    last = parts[-1]
    return text[: text.rfind(last)].strip()
