"""VLMEvalKit's exact-matching answer extraction, reimplemented from its observed behaviour
(../shared/VLMEVAL_COMPAT.md), so a run can be scored the way GMAI-MMBench's official
numbers were.

VLMEvalKit writes ``Z`` when it reads no answer; here that is ``answer=None`` with status
``unparsed`` (or ``refused`` for its reject phrases) and a method ending in ``Z``, which scores
the same (wrong). Its only scoring is single-letter equality, so a multi-answer item can never
be matched: the parser returns at most one letter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from medlens.extract.extraction import Extraction

_API_FAILURE = "Failed to obtain answer via API"
_REJECT_PHRASES = (
    "Sorry, I can't help with images of people yet.",
    "I can't process this file.",
    "I'm sorry, but without the image provided",
    "Cannot determine the answer",
)
_SPLIT_CHARS = str.maketrans({ch: " " for ch in ".()[],:;!*#{}"})
# Only A–D, whatever the item's options: observed ("The correct answer is E" on 5 options → Z).
# The bold markers and the word boundary after the letter are our reading of the rule; no
# observed case pins them down.
_ANSWER_IS = re.compile(r"(?:correct )?answer is[:\s]*\**\s*([A-D])(?![A-Za-z])", re.I)


def extract_vlmeval(options: Mapping[str, str], text: str) -> Extraction:
    """One letter, or no answer, exactly as VLMEvalKit's exact matching reads `text`."""
    if not text.strip():
        return Extraction(None, "empty", "empty")
    found = _option_step(options, text)
    if found is None:
        found = _text_step(options, text)
    return found or Extraction(None, "unparsed", "vlmeval:no_answer:Z")


def _option_step(options: Mapping[str, str], text: str) -> Extraction | None:
    if _API_FAILURE in text:
        return None
    if any(phrase in text for phrase in _REJECT_PHRASES):
        return Extraction(None, "refused", "vlmeval:reject_phrase:Z")
    tokens = text.translate(_SPLIT_CHARS).split()
    present = [letter for letter in options if letter in tokens]
    # One letter is accepted only near the end: its first occurrence among the last four tokens.
    if len(present) == 1 and tokens.index(present[0]) >= len(tokens) - 4:
        return Extraction(present[0], "ok", "vlmeval:option_letter")
    if not present and "Z" in tokens:
        return Extraction(None, "unparsed", "vlmeval:z_token:Z")
    # Reached also when one letter sits too early or several appear: the documented 5-option
    # case ("The correct answer is E. …" → Z, "regex covers A–D only") implies the regex runs.
    match = _ANSWER_IS.search(text)
    if match and match.group(1).upper() in options:
        return Extraction(match.group(1).upper(), "ok", "vlmeval:answer_is")
    return None


def _text_step(options: Mapping[str, str], text: str) -> Extraction | None:
    """Option text as a substring, only for outputs at most twice the options' total length."""
    if len(text) > 2 * sum(len(str(value)) for value in options.values()):
        return None
    lowered = text.lower()
    hits = [letter for letter, value in options.items() if str(value).lower() in lowered]
    return Extraction(hits[0], "ok", "vlmeval:option_text") if len(hits) == 1 else None
