"""Open answers read as a careful reader reads them: does the answer *assert* the gold concept?

The main open-answer score credits an answer when a sentence of it states the gold concept as
its answer — the gold's own words, or a name of the same concept in a vocabulary
(``extract.vocabulary``: "computed tomography" for ``CT``, "two" for ``2``, "upper right lung"
for ``right upper lobe``). Credited: "The scan shown is a computed tomography image." (gold
``CT``), "Both kidneys are visible, so there are two." (``2``), "This is the liver, seen in
cross-section." (``liver``). Rejected, each with its reason:

- ``negated``: "There is no free air.", "It is not the liver." (a negation before the gold in
  its clause, or "… is not seen/absent" after it);
- ``hedge``: "It is probably the liver.", "This may represent free air." (``polarity.HEDGE``);
- ``list``: "The liver and the spleen.", "CT or MRI", "liver, spleen and kidneys", "the prostate
  with adenocarcinoma" — the gold coordinated with another candidate or an extra finding;
- ``comparison``: "The spleen is larger than the liver." — the gold after "than" /
  "compared with", or in a clause with "versus";
- ``other_candidate``: another value of the gold's vocabulary axis asserted as well, on axes
  with one value per image (modality, plane, sex, MR sequence, body region: "This is a CT. An
  MRI would show …" for ``CT``);
- ``question``: the gold only inside a question asked back ("Is this the liver?");
- less specific answers are never credited, because the gold's every word (or a vocabulary
  name of it) must be stated: "MRI" is not "T2-weighted MRI", "left lung" not "lower left lung".

A gold of several parts ("Lung, Spinal Cord", "heart and liver") needs every part stated; the
parts may be listed together. Exact match (SQuAD normalisation) is always credited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from medlens.extract.containers import sentences
from medlens.extract.normalise import normalize_answer
from medlens.extract.polarity import hedges
from medlens.extract.vocabulary import Vocabulary, active_vocabulary


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?|[,;/]")
"""Words, decimals kept whole ("2.5" is not "2" and "5"), and the punctuation that joins lists."""
_ARTICLES = frozenset({"a", "an", "the"})
_BOUNDARY = frozenset(",;") | {"but", "however", "whereas", "while", "although", "though", "yet"}
_NEGATION = _word_set(
    "not no without neither nor never t cannot rather instead absent absence exclude excluded "
    "excludes excluding except lack lacks lacking unlikely nothing"
)
_NEGATION_AFTER = _word_set("not t absent excluded unlikely ruled negative")
_COORDINATION = _word_set("and or nor plus versus vs / either both")
_NOT_A_LIST = _word_set(
    "it its there this that is are was were shows show appears appear seems which they i we so "
    "then also located seen visible contrast including specifically particularly especially "
    "namely such showing containing where"
)
_COMPARATIVE = frozenset({"than", "compared", "relative"})
_VERSUS = frozenset({"versus", "vs"})
EXCLUSIVE_AXES = ("modality", "plane", "sex", "mr_sequence", "body_region")
"""Axes with one value per image: naming a second value is a second candidate answer. Organs,
sides and counts are not (an answer names other organs while saying which one is abnormal)."""
_GOLD_PARTS = re.compile(r"\s*,\s*|\s+and\s+", re.I)


@dataclass(frozen=True)
class Assertion:
    """Whether an open answer asserts the gold, and the rule that decided."""

    credited: bool
    rule: str
    """``exact``, ``asserted``, ``vocab:AXIS:TERM`` (a vocabulary entry was needed), or why
    not: ``negated``, ``hedge``, ``list``, ``comparison``, ``other_candidate``, ``question``,
    ``not_stated``."""


@dataclass(frozen=True)
class _Form:
    tokens: tuple[str, ...]
    entry: str | None
    """The vocabulary entry (``vocab:AXIS:TERM``) this form comes from, None for the gold's own."""


def tokens_of(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower().replace("’", "'")) if t not in _ARTICLES]


def asserts_gold(predicted: str, gold: str, vocabulary: Vocabulary | None = None) -> Assertion:
    """How a careful reader scores `predicted` against `gold` (module docstring)."""
    if normalize_answer(predicted) == normalize_answer(gold) and normalize_answer(gold):
        return Assertion(True, "exact")
    vocab = vocabulary if vocabulary is not None else active_vocabulary()
    whole = vocab.concept(predicted)
    gold_concept = vocab.concept(gold)
    if whole is not None and gold_concept is not None and whole[:2] == gold_concept[:2]:
        entry = whole[2] or gold_concept[2]
        return Assertion(True, entry.name if entry else "exact")
    parts = _parts(gold, vocab)
    if not parts:
        return Assertion(False, "not_stated")
    said = [tokens_of(s) for s in sentences(predicted) if not s.rstrip().endswith("?")]
    whole_gold = tuple(tokens_of(gold))
    if len(parts) > 1 and any(_spans(words, [_Form(whole_gold, None)]) for words in said):
        parts = [[_Form(whole_gold, None)]]  # a caption with "and" or "no" in it, said whole
    verdicts = [_stated(part, said, parts, predicted) for part in parts]
    failed = next((v for v in verdicts if not v.credited), None)
    if failed is not None:
        return failed
    if (
        gold_concept is not None
        and gold_concept[0] in EXCLUSIVE_AXES
        and _other_candidate(said, gold_concept[:2], parts, vocab)
    ):
        return Assertion(False, "other_candidate")
    used = next((v.rule for v in verdicts if v.rule.startswith("vocab:")), "asserted")
    return Assertion(True, used)


def _parts(gold: str, vocab: Vocabulary) -> list[list[_Form]]:
    """Each part of the gold with its forms: the gold's own words and its vocabulary names."""
    pieces = [gold] if vocab.concept(gold) else [p for p in _GOLD_PARTS.split(gold) if p.strip()]
    parts = []
    for piece in pieces:
        own = tuple(tokens_of(piece))
        if not own:
            continue
        forms = [_Form(own, None)]
        concept = vocab.concept(piece)
        if concept is not None:
            entries = {normalize_answer(e.term): e.name for e in vocab.entries(concept[0])
                       if e.canonical == concept[1]}  # fmt: skip
            for form in vocab.forms_of(*concept[:2]):
                words = tuple(tokens_of(form))
                if words and words != own:
                    forms.append(_Form(words, entries.get(form)))
            for form, entry in vocab.narrower_of(*concept[:2]).items():
                forms.append(_Form(tuple(tokens_of(form)), entry.name))  # FLAIR says MRI
        parts.append(forms)
    return parts


def _stated(
    forms: list[_Form], said: list[list[str]], parts: list[list[_Form]], text: str
) -> Assertion:
    """The first clean statement of one gold part, else the reason none is clean."""
    reasons = []
    hedged = [
        hedges(_without_forms(s, forms)) for s in sentences(text) if not s.rstrip().endswith("?")
    ]
    for index, words in enumerate(said):
        gold_spans = _spans(words, [f for part in parts for f in part])
        for start, end, form in _spans(words, forms):
            reason = _rejection(words, start, end, gold_spans)
            if reason is None and index < len(hedged) and hedged[index]:
                reason = "hedge"
            if reason is None:
                return Assertion(True, _named(form, forms[0]))
            reasons.append(reason)
    if not reasons and any(_spans(tokens_of(text), forms)):
        return Assertion(False, "question")
    return Assertion(False, reasons[0] if reasons else "not_stated")


def _without_forms(sentence: str, forms: list[_Form]) -> str:
    """`sentence` without the gold's own words: "probably" inside a gold caption ("opened muscle
    probably psoas …", PathVQA) is the gold's, not a hedge of the answer."""
    for form in forms:
        words = r"\W+".join(re.escape(token) for token in form.tokens)
        sentence = re.sub(rf"\b{words}\b", " ", sentence, flags=re.I)
    return sentence


def _named(form: _Form, own: _Form) -> str:
    """``asserted`` when the gold's own words are inside the form ("CT scan" for CT), else the
    vocabulary entry that was needed."""
    width = len(own.tokens)
    inside = any(
        form.tokens[i : i + width] == own.tokens for i in range(len(form.tokens) - width + 1)
    )
    return "asserted" if form.entry is None or inside else form.entry


def _spans(words: list[str], forms: list[_Form]) -> list[tuple[int, int, _Form]]:
    """Non-overlapping occurrences of any form, longest forms first."""
    found: list[tuple[int, int, _Form]] = []
    taken = [False] * len(words)
    for form in sorted(forms, key=lambda f: -len(f.tokens)):
        width = len(form.tokens)
        for start in range(len(words) - width + 1):
            if tuple(words[start : start + width]) == form.tokens and not any(
                taken[start : start + width]
            ):
                taken[start : start + width] = [True] * width
                found.append((start, start + width, form))
    return sorted(found, key=lambda span: span[0])


def _rejection(
    words: list[str], start: int, end: int, gold_spans: list[tuple[int, int, _Form]]
) -> str | None:
    """Why the mention ``words[start:end]`` is not an assertion of it, or None."""
    first = max((i + 1 for i in range(start) if words[i] in _BOUNDARY), default=0)
    last = next((i for i in range(end, len(words)) if words[i] in _BOUNDARY), len(words))
    before, after = words[first:start], words[end:last]
    if _NEGATION & set(before) or _NEGATION_AFTER & set(after):
        return "negated"
    if _COMPARATIVE & set(before) or _VERSUS & set(before + after):
        return "comparison"
    gold_at = {i for s, e, _ in gold_spans for i in range(s, e)}
    if _coordinated(words, start, end, gold_at):
        return "list"
    return None


def _coordinated(words: list[str], start: int, end: int, gold_at: set[int]) -> bool:
    """The mention joined by "and"/"or"/"with" (or a comma list) to another candidate."""
    previous = words[start - 1] if start else ""
    if previous == "either" or (
        previous in _COORDINATION
        and start >= 2
        and start - 2 not in gold_at
        and words[start - 2] not in _NOT_A_LIST | {","}
    ):
        return True
    comma_list = "," in words[max(0, start - 4) : max(0, start - 2)]  # "liver, spleen, kidneys"
    if previous == "," and start >= 2 and start - 2 not in gold_at and comma_list:
        return words[start - 2] not in _NOT_A_LIST
    following = words[end] if end < len(words) else ""
    if following in _COORDINATION | {"with"} and end + 1 < len(words) and end + 1 not in gold_at:
        return words[end + 1] not in _NOT_A_LIST
    if following == "," and end + 1 not in gold_at:
        window = words[end + 1 : end + 5]
        joined = next((i for i, w in enumerate(window) if w in ("and", "or", ",")), None)
        return joined is not None and joined > 0 and not _NOT_A_LIST & set(window[:joined])
    return False


def _other_candidate(
    said: list[list[str]], gold: tuple[str, str], parts: list[list[_Form]], vocab: Vocabulary
) -> bool:
    """Another value of the gold's axis stated (not negated, not a comparison) anywhere."""
    axis = gold[0]
    others = [
        _Form(tuple(tokens_of(form)), None)
        for (other_axis, canonical), forms in vocab.forms.items()
        if other_axis == axis and canonical != gold[1]
        for form in forms
    ]
    gold_forms = [f for part in parts for f in part]
    for words in said:
        gold_spans = _spans(words, gold_forms)
        gold_at = {i for s, e, _ in gold_spans for i in range(s, e)}
        for start, end, _ in _spans(words, others):
            if gold_at & set(range(start, end)):
                continue
            reason = _rejection(words, start, end, gold_spans)
            if reason in (None, "list"):
                return True
    return False
