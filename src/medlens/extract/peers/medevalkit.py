"""MedEvalKit's prompts, answer reading and per-item score (rule-based path, its default
``use_llm_judge False``; the judge mode is not reproduced) for all six datasets.

Reimplemented (not copied) from alibaba-damo-academy/MedEvalKit at commit
``9b12e3b34232a8779cc1275417bf4f72f03d28e0`` (research note ``issue23-peers.md`` §4):

- prompts ``utils/question_formats.py`` (MCQ l.1-24, yes/no l.26-37, closed l.39-50, open
  l.52-63); SLAKE ``utils/SLAKE/SLAKE.py:52-56`` (open vs closed by ``answer_type``); VQA-RAD /
  PathVQA ``VQA_RAD.py:43-47`` (yes/no prompt iff the lower-cased gold is yes/no), their
  questions lower-cased as the ``flaviagiammarino`` mirrors MedEvalKit loads store them;
  MedQA ``MedQA_USMLE.py:35-52``, MedMCQA ``MedMCQA.py:34-56``, PubMedQA ``PubMedQA.py:35-52``
  (options ``A.yes``, ``B.no``, ``C.maybe``, no space).
- reading (``utils/utils.py``): ``parse_response`` l.135-156 (lower case, ``\\boxed{}`` or
  ``<answer>``, then each answer phrase splits in turn, not stripped);
  ``judge_close_end_vqa`` l.159-166 (SLAKE closed: exact after deleting newlines and dots —
  SLAKE's raw gold is "Yes", so its ``answer in ["yes","no"]`` test never holds);
  ``judge_judgement`` l.168-175 (VQA-RAD/PathVQA yes/no: ``'yes' in r`` XOR ``'no' in r`` as
  substrings and the gold in r, so "nodule" says no and "eyes" says yes);
  ``judge_open_end_vqa`` l.178-207 (exact match, no strip: "right lung." is wrong; an empty reply
  crashes the peer's ROUGE, recorded as ``peer_would_crash`` and scored 0);
  ``judge_multi_choice`` l.95-132 (a leading bare letter, the letter before ":"/"." …, else the
  option most similar to the reply by ``difflib`` — so an empty reply picks option A:
  ``similarity_fallback``).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from medlens.core.items import Item
from medlens.extract.peers.common import PeerReading, is_open, lang_of, raw_gold, scored

COMMIT = "9b12e3b34232a8779cc1275417bf4f72f03d28e0"
SUPPORTED = {"slake": "SLAKE", "vqa-rad": "VQA_RAD", "pathvqa": "PATH_VQA",
             "pubmedqa": "PubMedQA", "medqa": "MedQA_USMLE", "medmcqa": "MedMCQA"}  # fmt: skip
DEPARTURES: tuple[str, ...] = (
    "MedEvalKit's optional GPT judge (use_llm_judge True) is not reproduced; its rule-based "
    "default is, item by item",
)
"""Where a replay can still differ from MedEvalKit's own number (``medlens explain`` prints them)."""
SUFFIX = {
    ("open", "en"): "\nPlease answer the question concisely.",
    ("open", "zh"): "\n请简要回答该问题。",
    ("closed", "en"): "\nAnswer the question using a single word or phrase.",
    ("closed", "zh"): "\n请用一个单词或者短语回答该问题。",
    ("yes_no", "en"): "\nPlease output 'yes' or 'no'(no extra output).",
}
MCQ_TAIL = "\nAnswer with the option's letter from the given choices directly."
ANSWER_PHRASES = ("**answer**:", "**answer**", "*answer*:", "**answer:**", "answer is",
                  "answer:", "答案:", "final answer", "final answer is")  # fmt: skip
PUBMEDQA_OPTIONS = ("yes", "no", "maybe")


def prompt(item: Item) -> str:
    source = item.meta.get("source")
    if source in ("medqa", "medmcqa", "pubmedqa"):
        text = _mcq_prompt(item.question, choices(item))
        return f"Context: {item.context or ''}\n{text}" if source == "pubmedqa" else text
    if source == "slake":
        form = "open" if is_open(item) else "closed"
        return item.question + SUFFIX[(form, "zh" if lang_of(item) == "zh" else "en")]
    form = "yes_no" if raw_gold(item).lower() in ("yes", "no") else "open"
    return item.question.lower() + SUFFIX[(form, "en")]


def _mcq_prompt(question: str, shown: Sequence[str]) -> str:
    options = "\n".join(shown)
    return f"\nQuestion: {question}\nOptions: \n{options}{MCQ_TAIL}"


def choices(item: Item) -> list[str]:
    """The options as MedEvalKit shows them: ``A. text`` (PubMedQA: ``A.yes``)."""
    if item.meta.get("source") == "pubmedqa":
        return [f"{chr(65 + i)}.{text}" for i, text in enumerate(PUBMEDQA_OPTIONS)]
    return [f"{key}. {text}" for key, text in item.options.items()]


def read(item: Item, text: str) -> PeerReading:
    source = item.meta.get("source")
    if source in ("medqa", "medmcqa", "pubmedqa"):
        gold = _gold_letter(item)
        return judge_multi_choice(item, choices(item), gold, extract_tag(text, "answer"))
    response = _container(text)
    gold = raw_gold(item)
    if source == "slake":
        if is_open(item):
            return judge_open(item, gold, response)
        said = parse_response(response).replace("\n", "").replace(".", "")
        return PeerReading(scored(item, said == gold.lower()), said, _exact_rule(said, gold))
    gold, response = gold.lower().strip(), response.lower().strip()
    if gold in ("yes", "no"):
        return judge_judgement(item, gold, response)
    return judge_open(item, gold, response)


def _gold_letter(item: Item) -> str:
    if item.meta.get("source") == "pubmedqa":
        answer = str(item.answer or "")
        return chr(65 + PUBMEDQA_OPTIONS.index(answer)) if answer in PUBMEDQA_OPTIONS else ""
    return str(item.answer or "")


def _exact_rule(said: str, gold: str) -> str:
    return "exact_match" if said == gold.lower() else ("empty" if not said.strip() else "no_match")


def _container(response: str) -> str:
    """SLAKE/VQA-RAD read a ``\\boxed{}`` answer when there is one, else ``<answer>``."""
    boxed = extract_boxed_content(response)
    if boxed != "None":
        return boxed
    return extract_tag(response, "answer") if "<answer>" in response else response


def extract_boxed_content(text: str) -> str:
    """The content of the last ``\\boxed{…}`` (balanced braces), stripped; the string "None"
    when there is none or it is unclosed (MathRuler's ``extract_boxed_content``)."""
    start = text.rfind("\\boxed{")
    if start == -1:
        return "None"
    depth, index = 1, start + len("\\boxed{")
    for position in range(index, len(text)):
        depth += {"{": 1, "}": -1}.get(text[position], 0)
        if depth == 0:
            return text[index:position].strip()
    return "None"


def extract_tag(text: str, tag: str) -> str:
    """Every ``<tag>…</tag>`` content joined by spaces; else the whole text ("" for none)."""
    if not text:
        return ""
    opening, closing = f"<{tag}>", f"</{tag}>"
    found, start = [], text.find(opening)
    while start != -1:
        end = text.find(closing, start + len(opening))
        if end == -1:
            break
        found.append(text[start + len(opening) : end])
        start = text.find(opening, end + len(closing))
    joined = " ".join(found).strip() if found else ""
    return joined or text


def parse_response(response: str) -> str:
    response = response.lower()
    if "boxed" in response:
        response = extract_boxed_content(response)
    elif "<answer>" in response:
        response = extract_tag(response, "answer")
    for phrase in ANSWER_PHRASES:
        if phrase in response:
            response = response.split(phrase)[-1]
    return response


def judge_judgement(item: Item, gold: str, response: str) -> PeerReading:
    said = parse_response(response).replace("\n", "").replace(".", "")
    says_yes, says_no = "yes" in said, "no" in said
    right = (says_yes != says_no) and gold in said
    answer = ("yes" if says_yes else "no") if says_yes != says_no else None
    rule = "substring_xor" if says_yes != says_no else "both_or_neither"
    return PeerReading(scored(item, right), answer, rule)


def judge_open(item: Item, gold: str, response: str) -> PeerReading:
    said = parse_response(response)
    crashes = not " ".join(p for p in said.split(".") if p) or not said.split()
    if crashes:  # the peer's ROUGE (or its token F1) raises on an empty hypothesis
        return PeerReading(scored(item, False), None, "peer_would_crash")
    right = said == gold.lower()
    return PeerReading(scored(item, right), said, "exact_match" if right else "no_match")


def judge_multi_choice(item: Item, shown: list[str], gold: str, response: str) -> PeerReading:
    letters = [chr(ord("a") + i) for i in range(len(shown))]
    response = response.lower()
    blocks = response.split("\n\n")
    if blocks[0] in letters:
        response = blocks[0]
    elif blocks[-1].split(".")[0] in letters:
        response = blocks[-1].split(".")[0]
    response = parse_response(response).strip().lower().replace("\n", "")
    lowered = [choice.lower() for choice in shown]
    said = response.split(".")[0].split(":")[-1]
    answer = gold.strip().lower()
    if said == answer:
        return PeerReading(scored(item, True), said.upper(), "letter")
    if said in letters:  # a letter, compared with the option's text: never equal
        return PeerReading(scored(item, False), said.upper(), "letter")
    if said in lowered:
        index = lowered.index(said)
        right = answer in letters and said == lowered[letters.index(answer)]
        return PeerReading(scored(item, right), letters[index].upper(), "option_text")
    index = most_similar(lowered, response)
    right = letters[index] == answer or lowered[index] == answer
    return PeerReading(scored(item, right), letters[index].upper(), "similarity_fallback")


def most_similar(options: Sequence[str], target: str) -> int:
    """The first option with the highest ``SequenceMatcher`` ratio (0 when none beats 0)."""
    best, best_ratio = 0, 0.0
    for index, option in enumerate(options):
        ratio = difflib.SequenceMatcher(None, option, target).ratio()
        if ratio > best_ratio:
            best, best_ratio = index, ratio
    return best
