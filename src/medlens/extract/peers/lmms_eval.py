"""lmms-eval's prompts, answer reading and per-item score for SLAKE and MedQA.

Reimplemented (not copied) from EvolvingLMMs-Lab/lmms-eval at commit
``75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3`` (research note ``issue23-peers.md`` §2):

- every reply first loses its reasoning blocks (``lmms_eval/api/reasoning.py:5-36``, applied by
  ``evaluator.py:1183-1233`` with the default ``--reasoning_tags`` of ``__main__.py:310-313``);
- SLAKE (``tasks/slake/``): prompt ``_default_template_yaml:66-69`` / ``slake_zh.yaml:4-7``; the
  whole reply is the answer; ``normalize_answer`` (``utils.py:117-128``, word sets l.31-35)
  of reply and raw gold must be equal. No article removal, no number words, no phrase stripping;
- MedQA (``tasks/medqa/utils.py``): prompt l.6-26 (it always names A–E); reading
  ``_parse_multi_choice_response`` l.83-113: ``(X)``, else `` X `` , else ``X.``; several
  candidates → the one whose `` X `` comes last (ties: the first in A–E order); none →
  **a random letter** (l.107-108), recorded as ``random_fallback``.

The random letter, to the digit: lmms-eval's CLI seeds Python's global ``random`` once with 0
(``--seed 0,1234,1234,1234``, ``evaluator.py`` ``random.seed(random_seed)``) and its
``process_results`` runs over the documents in order, so the k-th unreadable answer in document
order gets the k-th ``random.choice`` of a ``random.Random(0)`` stream
(:class:`FallbackStream`). A run draws them so when it finishes (``execution.replies.
redraw_in_document_order``) and ``explain`` the same way (:func:`read_in_document_order`); a
single output read on its own (no document order) draws from a stream seeded by its item id.
Checked against lmms-eval 0.7.3's own ``tasks/medqa/utils.py`` (sha256 a88234cb…, the file of
the commit above) in ``tests/extract/fixtures/lmms_eval_medqa_0.7.3.json``.
"""

from __future__ import annotations

import random
import re
import string

from medlens.core.items import Item
from medlens.extract.peers.common import PeerReading, lang_of, raw_gold, scored

COMMIT = "75571cfe0fa36ca5ec2e6aa2bb268f9d38295af3"
SUPPORTED = {"slake": "slake_en, slake_zh", "medqa": "medqa"}
DEPARTURES: tuple[str, ...] = (
    "an item whose request failed has no output and draws no fallback letter; lmms-eval reads "
    "an empty reply and draws one, so each such item before an unreadable answer shifts the "
    "stream",
    "one task per lmms-eval process is assumed: several tasks in one invocation, or several "
    "ranks, share or split lmms-eval's global random stream differently",
)
"""Where a replay can still differ from lmms-eval's own number (``medlens explain`` prints them)."""
REASONING_TAGS = (("<think>", "</think>"), ("<analysis>", "</analysis>"))
SLAKE_SUFFIX = {
    "en": "\nAnswer the question using a single word or phrase.",
    "zh": "\n请用一个词或短语回答问题。",
}
MEDQA_HEAD = (
    "Answer the following multiple choice question. There is only one correct answer. The last "
    "line of your response should be in the format 'Answer: $LETTER' (without quotes), where "
    "LETTER is one of A, B, C, D, or E.\nQuestion: "
)
EN_YES, EN_NO = frozenset({"yes", "yeah", "yep", "true"}), frozenset({"no", "nope", "false"})
ZH_YES = frozenset({"是", "是的", "有", "包含", "可以", "能", "会", "正常"})
ZH_NO = frozenset(
    {"否", "不是", "没有", "无", "不包含", "不能", "不会", "不可以", "不正常", "异常"}
)
ZH_PUNCTUATION = (
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～、，。；：《》？【】（）"
)
_TO_SPACE = str.maketrans(dict.fromkeys(string.punctuation + ZH_PUNCTUATION, " "))
_PARENTHESES = (re.compile(r"\([^)]*\)"), re.compile(r"（[^）]*）"))
_CHOICES = "ABCDE"


def prompt(item: Item) -> str:
    if item.meta.get("source") == "medqa":
        lines = "".join(f"{key}. {item.options[key].strip()}\n" for key in _keys(item))
        return f"{MEDQA_HEAD}{item.question.strip()}\n{lines}"
    return item.question.strip() + SLAKE_SUFFIX["zh" if lang_of(item) == "zh" else "en"]


class FallbackStream:
    """lmms-eval's global ``random`` after ``random.seed(0)``: one draw per unreadable answer."""

    def __init__(self, seed: int | str = 0) -> None:
        self._random = random.Random(seed)

    def choice(self, choices: list[str]) -> str:
        return self._random.choice(choices)


def read(item: Item, text: str, stream: FallbackStream | None = None) -> PeerReading:
    reply = strip_reasoning(text)
    if item.meta.get("source") == "medqa":
        return _medqa(item, reply, stream)
    said, gold = normalize_answer(reply), normalize_answer(raw_gold(item))
    rule = "exact_match" if said == gold else ("empty" if not said else "no_match")
    return PeerReading(scored(item, said == gold), said, rule)


def strip_reasoning(text: str) -> str:
    """Each tag pair: cut every start…end block; an end tag without a start keeps what follows
    its last occurrence (a template that pre-filled ``<think>``); then strip."""
    for start, end in REASONING_TAGS:
        while True:
            first = text.find(start)
            close = text.find(end, first) if first != -1 else -1
            if first == -1 or close == -1:
                break
            text = text[:first] + text[close + len(end) :]
        if end in text and start not in text:
            text = text[text.rfind(end) + len(end) :]
    return text.strip()


def normalize_answer(answer: str | None) -> str:
    text = "" if answer is None else str(answer)
    text = text.strip().lower()
    for pattern in _PARENTHESES:
        text = pattern.sub(" ", text)
    text = " ".join(text.translate(_TO_SPACE).split())
    if text in ("x ray", "xray"):
        return "xray"
    if text in EN_YES or text in ZH_YES:
        return "yes"
    if text in EN_NO or text in ZH_NO:
        return "no"
    return text


def _keys(item: Item) -> list[str]:
    return [key for key in _CHOICES if key in item.options]


def _medqa(item: Item, reply: str, stream: FallbackStream | None) -> PeerReading:
    choices = _keys(item)
    letter, rule = parse_choice(reply, choices, item.id, stream)
    return PeerReading(scored(item, letter == item.answer), letter, rule)


def fallback_choices(item: Item) -> list[str]:
    """The letters a random fallback draws from (lmms-eval's ``medqa_doc_to_choice``)."""
    return _keys(item)


def read_in_document_order(pairs: list[tuple[Item, str]]) -> list[PeerReading]:
    """Each output's reading, the random fallbacks drawn from one stream in this order."""
    stream = FallbackStream()
    return [read(item, text, stream) for item, text in pairs]


def parse_choice(
    reply: str, choices: list[str], item_id: str, stream: FallbackStream | None = None
) -> tuple[str, str]:
    """(letter, rule) as ``_parse_multi_choice_response`` reads it."""
    response = reply.strip()
    for char in ",.!?;:'":
        response = response.strip(char)
    padded = f" {response} "
    found, rule = _candidates(padded, choices)
    if not found:
        if not choices:
            return "", "no_options"
        draw = stream or FallbackStream(f"lmms-eval:{item_id}")
        return draw.choice(choices), "random_fallback"
    if len(found) == 1:
        return found[0], rule
    last = [padded.rfind(f" {c} ") for c in found]
    return found[last.index(max(last))], f"{rule}:last"


def _candidates(padded: str, choices: list[str]) -> tuple[list[str], str]:
    """``(X)``, else `` X ``, else ``X.``: the first shape any choice appears in."""
    for rule, shape in (("parenthesis", "({})"), ("spaced_letter", " {} "), ("letter_dot", "{}.")):
        found = [c for c in choices if shape.format(c) in padded]
        if found:
            return found, rule
    return [], "none"
