"""EvalScope's prompts, answer reading and per-item score for SLAKE, PubMedQA and MedMCQA.

Reimplemented (not copied) from modelscope/evalscope at commit
``fde259d2a32ab8a4cdb3af44dc8b18f504f1e277`` (research note ``issue23-peers.md`` §3). No
reasoning block is stripped (``default_data_adapter.py:587-607`` applies only filters a user
configures); no judge (rule-based is the default).

- SLAKE (``benchmarks/slake/``): prompt ``slake_adapter.py:26-32``; reading ``utils.py:102-118``:
  the last ``ANSWER:`` match (``\\s*`` may cross a newline), stripped of quotes, else the whole
  reply; ``normalize_answer`` (``utils.py:66-99``: parentheses and punctuation out, number words
  to digits, articles dropped, X-ray spellings and yes/no words folded) of both sides equal.
- MedMCQA (``med_mcqa_adapter.py:36-58``): prompt ``MultipleChoiceTemplate.SINGLE_ANSWER``
  (``utils/multi_choices.py:13-19``, options ``X) text``); reading ``parse_answers``
  (l.223-282): the last ``ANSWER:`` marker followed by a label run made only of allowed labels
  (``ANSWER: B, not C`` → B), else the **last capital letter** of the reply if it is a label
  (``last_capital``: "Answer: Bone marrow" → B); exactly one allowed label or nothing.
- PubMedQA (``pumed_qa/pubmed_qa_adapter.py``): prompt l.55, 64-69; score l.80-88:
  ``\\bGOLD\\b`` anywhere in the upper-cased reply, so "No, but maybe" is right for NO and for
  MAYBE. The class recorded for a wrong item is the first of YES/NO/MAYBE the reply contains as
  a substring (its confusion matrix, l.90-202).
"""

from __future__ import annotations

import re
import string

from medlens.core.items import Item
from medlens.extract.peers.common import PeerReading, lang_of, raw_gold, scored

COMMIT = "fde259d2a32ab8a4cdb3af44dc8b18f504f1e277"
SUPPORTED = {"slake": "slake", "pubmedqa": "pubmedqa", "medmcqa": "med_mcqa"}
DEPARTURES: tuple[str, ...] = (
    "PubMedQA's context is medlens's abstract with section labels, not EvalScope's join: prompts "
    "differ, the reading of a replayed output does not",
)
"""Where a replay can still differ from EvalScope's own number (``medlens explain`` prints them)."""
SLAKE_SUFFIX = {
    "en": "\nAnswer the question with a single word or phrase in English.\nThe last line of your "
    'response must be of the form "ANSWER: <answer>" (without quotes).',
    "zh": '\n请用一个中文词语或短语回答问题。\n回答的最后一行必须是 "ANSWER: <答案>" 的形式（不含引号）。',
}
MCQ_HEAD = (
    "Answer the following multiple choice question. The entire content of your response should "
    "be of the following format: 'ANSWER: [LETTER]' (without quotes) where [LETTER] is one of "
    "{letters}.\n\n{question}\n\n{choices}"
)
PUBMEDQA_PROMPT = (
    "Abstract: {context}\n\nQuestion: {question}\n"
    "Please answer YES or NO or MAYBE without an explanation."
)
ZH_PUNCTUATION = "！？。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～、，；：《》【】"
EN_YES, EN_NO = frozenset({"yes", "yeah", "yep", "true"}), frozenset({"no", "nope", "false"})
ZH_YES = frozenset({"是", "是的", "有", "包含", "存在", "可以", "能", "会"})
ZH_NO = frozenset(
    {"否", "不是", "没有", "无", "不包含", "不存在", "不可以", "不能", "不会", "不正常"}
)
NUMBER_WORDS = {"none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4",
                "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10"}  # fmt: skip
NUMBER_WORDS |= {"零": "0", "一": "1", "两": "2", "二": "2", "三": "3", "四": "4", "五": "5",
                 "六": "6", "七": "7", "八": "8", "九": "9", "十": "10"}  # fmt: skip
ALIASES = {"x ray": "xray", "xray": "xray", "x光": "xray", "x 光": "xray", "x射线": "xray",
           "x 射线": "xray"}  # fmt: skip
_TO_SPACE = str.maketrans(dict.fromkeys(string.punctuation + ZH_PUNCTUATION, " "))
_ANSWER = re.compile(r"ANSWER:\s*(.*)", re.I)
_MARKER = re.compile(r"(?i)ANSWER\s*:\s*\**\s*")
_BRACKETED = re.compile(r"[\(\[（【]\s*([A-Za-z\d](?:\s*[,，]\s*[A-Za-z\d])*)\s*[\)\]）】]")
_PLAIN = re.compile(r"([A-Za-z\d][A-Za-z\d ,]*)")
_TOKEN = re.compile(r"[A-Za-z\d]+")


def prompt(item: Item) -> str:
    source = item.meta.get("source")
    if source == "pubmedqa":
        return PUBMEDQA_PROMPT.format(context=item.context or "", question=item.question)
    if source == "medmcqa":
        letters = ",".join(item.options)
        choices = "\n".join(f"{key}) {text}" for key, text in item.options.items())
        return MCQ_HEAD.format(letters=letters, question=item.question, choices=choices)
    return item.question.strip() + SLAKE_SUFFIX["zh" if lang_of(item) == "zh" else "en"]


def read(item: Item, text: str) -> PeerReading:
    source = item.meta.get("source")
    if source == "pubmedqa":
        return _pubmedqa(item, text)
    if source == "medmcqa":
        letter, rule = parse_answer_letter(text, set(item.options))
        gold = str(item.answer or "")
        return PeerReading(scored(item, letter.lower() == gold.lower()), letter or None, rule)
    said = normalize_answer(parse_answer(text))
    gold = normalize_answer(raw_gold(item))
    rule = "exact_match" if said == gold else ("empty" if not said else "no_match")
    return PeerReading(scored(item, said == gold), said, rule)


def parse_answer(reply: str) -> str:
    """The text after the last ``ANSWER:``, without quotes; else the whole reply."""
    found = _ANSWER.findall(reply or "")
    return found[-1].strip().strip("\"'") if found else (reply or "").strip()


def normalize_answer(answer: str | None) -> str:
    text = "" if answer is None else str(answer)
    text = re.sub(r"（[^）]*）", " ", re.sub(r"\([^)]*\)", " ", text.strip().lower()))
    words = text.translate(_TO_SPACE).split()
    text = " ".join(w for w in map(_number, words) if w not in ("a", "an", "the"))
    if text in ALIASES:
        return ALIASES[text]
    if text in EN_YES or text in ZH_YES:
        return "yes"
    if text in EN_NO or text in ZH_NO:
        return "no"
    return text


def _number(word: str) -> str:
    if word.endswith("个") and (word[:-1].isdigit() or word[:-1] in NUMBER_WORDS):
        word = word[:-1]
    return NUMBER_WORDS.get(word, word)


def parse_answer_letter(reply: str, allowed: set[str]) -> tuple[str, str]:
    """(letter or "", rule): the last marker carrying labels, else the last capital letter."""
    for marker in reversed(list(_MARKER.finditer(reply))):
        tail = reply[marker.end() :]
        for pattern in (_BRACKETED, _PLAIN):
            label = pattern.match(tail)
            prefix = _label_prefix(label.group(1), allowed) if label else ""
            if prefix:
                matched = prefix.strip().rstrip(".")
                return (matched, "answer_marker") if matched in allowed else ("", "not_one_label")
    capitals = [char for char in reply if char.isupper()]
    if capitals and capitals[-1] in allowed:
        return capitals[-1], "last_capital"
    return "", "no_label"


def _label_prefix(capture: str, allowed: set[str]) -> str:
    end = 0
    for token in _TOKEN.finditer(capture):
        word = token.group(0)
        if word in allowed or set(word) <= allowed:
            end = token.end()
            continue
        break
    return capture[:end]


def _pubmedqa(item: Item, reply: str) -> PeerReading:
    said = reply.strip().upper()
    gold = str(item.answer or "").upper()
    right = bool(gold) and re.search(rf"\b{gold}\b", said) is not None
    if right:
        return PeerReading(scored(item, True), gold.lower(), "gold_word_found")
    named = next((word for word in ("YES", "NO", "MAYBE") if word in said), None)
    return PeerReading(scored(item, False), named.lower() if named else None, "gold_word_absent")
