"""VLMEvalKit's yes/no answer matching (its ``Y/N`` datasets: MME, POPE, HallusionBench, …),
reimplemented from its code (``vlmeval/dataset/utils/yorn.py``: ``YOrN_Extraction`` and
``process_punctuation`` in ``vlmeval/smp/misc.py``), so ``--extract vlmeval`` and the
"VLMEvalKit rules" column read yes/no items as VLMEvalKit does:

1. lower-case the prediction;
2. strip punctuation the VQA way: each of ``; / [ ] " { } ( ) = + \\ _ - > < @ ` , ? !`` is
   deleted when it touches a space anywhere in the text (or the text has a digit-comma-digit),
   else replaced by a space; then full stops not between digits are deleted (at most 32 of
   them: VLMEvalKit passes ``re.UNICODE`` where ``re.sub`` takes its count);
3. split on whitespace: ``yes`` among the words and ``no`` not → yes; ``no`` and not ``yes`` →
   no; otherwise Unknown, which scores wrong (VLMEvalKit sends Unknown to an LLM judge only
   when one is configured; exact matching keeps it).

VLMEvalKit has no three-way yes/no/maybe dataset and its matching knows no "maybe": on PubMedQA
a "maybe" answer is Unknown, so a "maybe" gold is never matched under these rules. That is
reproduced, not corrected: the extraction-sensitivity figure shows what it costs.
"""

from __future__ import annotations

import re

from medlens.extract.extraction import Extraction

_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">",
                "<", "@", "`", ",", "?", "!")  # fmt: skip
_COMMA_IN_NUMBER = re.compile(r"(\d)(,)(\d)")
_PERIOD = re.compile(r"(?<!\d)\.(?!\d)")
_PERIODS_REMOVED = 32
"""``periodStrip.sub('', text, re.UNICODE)``: the flag lands in ``count``; re.UNICODE == 32."""


def strip_punctuation(text: str) -> str:
    """VLMEvalKit's ``process_punctuation`` (the VQA evaluation's punctuation rule)."""
    out = text
    number_comma = _COMMA_IN_NUMBER.search(text) is not None
    for mark in _PUNCTUATION:
        touches_space = mark + " " in text or " " + mark in text
        out = out.replace(mark, "" if touches_space or number_comma else " ")
    return _PERIOD.sub("", out, count=_PERIODS_REMOVED)


def extract_vlmeval_yes_no(text: str) -> Extraction:
    """``yes``/``no`` as VLMEvalKit's exact matching reads `text`, or no answer (Unknown)."""
    if not text.strip():
        return Extraction(None, "empty", "empty")
    words = strip_punctuation(text.lower()).split()
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes and not has_no:
        return Extraction("yes", "ok", "vlmeval:yorn")
    if has_no and not has_yes:
        return Extraction("no", "ok", "vlmeval:yorn")
    return Extraction(None, "unparsed", "vlmeval:yorn:Unknown")
