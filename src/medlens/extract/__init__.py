"""Deterministic answer extraction: model output text → Extraction(answer, status, method).

``mode="medlens"`` reads what a careful reader would read (containers, conclusions, leading
letters, negation-aware option mentions, the question's polarity; never a guess).
``mode="vlmeval"`` reproduces VLMEvalKit's exact matching for closed kinds (``vlmeval.py``;
yes/no: ``vlmeval_yorn.py``); it has no rules for free-text kinds, which are read the medlens
way in both modes. The peer modes (``lmms-eval``, ``evalscope``, ``medevalkit``,
``multimedeval``: ``extract.peers``) read as those tools do and also give their verdict.
Imports ``core``."""

from __future__ import annotations

import re
import string

from medlens.core.items import Item
from medlens.extract.choice import extract_choice
from medlens.extract.cut import committed_part, ends_in_loop
from medlens.extract.extraction import EXTRACT_MODES, STATUSES, Extraction, Mode, Status
from medlens.extract.non_answer import (
    is_cut,
    non_answer,
    without_boilerplate,
    without_questions,
)
from medlens.extract.open import extract_boxes, extract_label, extract_open, extract_report
from medlens.extract.option_lines import reviews_options
from medlens.extract.vlmeval import extract_vlmeval
from medlens.extract.vlmeval_yorn import extract_vlmeval_yes_no
from medlens.extract.yes_no import extract_yes_no

__all__ = [
    "EXTRACT_MODES", "STATUSES", "Extraction", "Mode", "Status", "cut_reading", "extract",
    "is_three_way",
]  # fmt: skip


def is_three_way(item: Item) -> bool:
    """Yes/no/maybe (PubMedQA) rather than yes/no: declared by ``meta["answer_set"]``."""
    return item.meta.get("answer_set") == "yes/no/maybe"


def extract(
    item: Item, text: str | None, mode: Mode = "medlens", finish_reason: str | None = None
) -> Extraction:
    """Read the answer to `item` from `text` (`finish_reason` ``length``: cut at the token cap)."""
    if mode not in ("medlens", "vlmeval"):
        from medlens.extract.peers import read_as

        return read_as(item, text, mode).extraction(mode, text)
    if text is None or not text.strip():
        return Extraction(None, "empty", "empty")
    if mode == "medlens":
        return _read_bounded(item, text, finish_reason)
    return _read(item, text, mode)


MAX_READ = 4_000
"""Characters of an output medlens reads: a longer output (a model looping until its token
cap, a megabyte of pasted text) is read after its last reasoning block, by its first and last
:data:`MAX_READ` / 2 characters, where an answer opens or concludes. Every rule is a linear
scan or a linear number of short ones, so any output is read in bounded time (about 10 ms on
4,000 characters of the slowest shapes: ``bench/reading_bounds.py``)."""


_SPACE = re.compile(r"\s")


def bounded(text: str) -> str:
    """`text`, or its head and tail (cut at whitespace) when longer than :data:`MAX_READ`."""
    if len(text) <= MAX_READ:
        return text
    thought = text.rfind("</think>")
    if thought >= 0 and text[thought + 8 :].strip():
        text = text[thought + 8 :]  # what a reasoning model answered after thinking
        if len(text) <= MAX_READ:
            return text
    half = MAX_READ // 2
    head, tail = text[:half], text[-half:]
    end = max(head.rfind(" "), head.rfind("\n"))  # not inside a word, if one ends nearby
    start = _SPACE.search(tail, 0, 200)
    head = head[:end] if end > half - 200 else head
    return head + "\n\n" + (tail[start.end() :] if start else tail)


def _read_bounded(item: Item, text: str, finish_reason: str | None) -> Extraction:
    """medlens's reading of `text`; of a longer output only its head and tail, where options
    merely mentioned in the unread middle could change which are mentioned: not an answer."""
    if len(text) <= MAX_READ:
        return _read_committed(item, text, finish_reason)
    found = _read_committed(item, bounded(text), finish_reason)
    if found.method.split(":")[0] in _WEAK_CHOICE:
        return Extraction(None, "unparsed", f"too_long:{found.method}")
    return found


_LETTERS = frozenset(string.ascii_letters)
_LETTERED = ("choice", "multi_choice")
"""One ASCII letter answering a choice item (a third of GMAI outputs) is no non-answer, is not
cut (only "a" ends like a cut sentence, and lettered items keep it), and is read by
``extract_choice``'s first rule, ``bare_letter`` (``tests/extract/test_fast_paths.py``)."""

_WEAK_CHOICE = ("option_mention", "option_text")
"""Choice rules that read options mentioned while reasoning, not a commitment: a cut output
read by them has not answered yet."""


def _read_committed(item: Item, text: str, finish_reason: str | None) -> Extraction:
    """medlens's reading: non-answers commit to nothing; a cut output is read without its
    unfinished last sentence (``non_answer``)."""
    if text in _LETTERS and item.kind in _LETTERED and finish_reason != "length":
        letter = text.upper()  # a bare letter: what the rules below read, without them
        if letter in item.options:
            return Extraction(letter, "ok", "bare_letter")
    nothing = non_answer(text)
    if nothing is not None:
        return nothing
    text = without_boilerplate(text)
    closed = item.kind in ("choice", "multi_choice", "classify") or bool(item.options)
    by_text = item.kind in ("yes_no", "choice", "multi_choice")
    if finish_reason is None and ends_in_loop(text):
        finish_reason = "length"  # a loop runs until the token cap
    if is_cut(text, finish_reason, lettered=closed, by_text=by_text):
        return _read_cut(item, text, closed)
    return _read(item, text if closed else without_questions(text), "medlens")


def _read_cut(item: Item, text: str, closed: bool) -> Extraction:
    """A cut output, read by what it committed to before the cut (``extract.cut``): options only
    mentioned, or the first option of a review, are no answer yet."""
    kept, _ = committed_part(text, open_answer=item.kind == "open")
    if not kept:
        return Extraction(None, "unparsed", "truncated")
    found = _read(item, kept if closed else without_questions(kept), "medlens")
    weak = found.method.split(":")[0] in _WEAK_CHOICE
    review = _opens_or_ends_a_review(found.method, kept, text)
    if (found.status == "unparsed" or weak or review) and found.status != "refused":
        return Extraction(None, "unparsed", "truncated")
    return found


def _opens_or_ends_a_review(method: str, kept: str, text: str) -> bool:
    """A cut output whose leading letter opens an option-by-option review ("A) Pneumonia: this
    is possible because"), or whose closing option line is the review entry the cut fell in
    ("Let's analyze each option.⏎A) Pneumonia: this is"): no answer yet."""
    if method == "leading_letter":
        return reviews_options(kept) or reviews_options(text)
    return method == "conclusion" and reviews_options(text.rstrip().rsplit("\n", 1)[-1])


def cut_reading(item: Item, text: str | None, finish_reason: str | None) -> tuple[str, str] | None:
    """(the part read, the part dropped) of an output medlens reads as cut, else None (what
    ``medlens show`` prints)."""
    if text is None or not text.strip():
        return None
    text = without_boilerplate(bounded(text))
    closed = item.kind in ("choice", "multi_choice", "classify") or bool(item.options)
    by_text = item.kind in ("yes_no", "choice", "multi_choice")
    if not is_cut(text, finish_reason, lettered=closed, by_text=by_text):
        return None
    return committed_part(text, open_answer=item.kind == "open")


def _read(item: Item, text: str, mode: Mode) -> Extraction:
    if item.kind in ("choice", "multi_choice"):
        if mode == "vlmeval":
            return extract_vlmeval(item.options, text)
        return extract_choice(item.options, text, item.kind == "multi_choice", item.question)
    if item.kind == "yes_no":
        if mode == "vlmeval" and item.options:
            found = extract_vlmeval(item.options, text)
            if found.answer is not None:
                return Extraction(item.options[found.answer].strip().lower(), "ok", found.method)
            return found
        if mode == "vlmeval":
            return extract_vlmeval_yes_no(text)
        return extract_yes_no(item.options, text, is_three_way(item), item.question)
    if item.kind == "classify":
        return extract_label(item.options, item.meta, text)
    if item.kind == "detect":
        return extract_boxes(item.meta, text)
    if item.kind == "report":
        return extract_report(text)
    return extract_open(text)
