"""The ``wording`` check: MMBU's wording rules on a benchmark's image questions.

A question about an image should leave the answer to the image: it names no disease, outcome or
malignancy hint and no telling abbreviation (the lexicon, ``core.lexicon``), and above all not
its own gold answer. Every image question is judged by :func:`core.lexicon.judge_wording`
(yes/no questions, stated choices and grounding targets are allowed, as there). Text-only items
are left out: a MedQA vignette names diseases because the text is the evidence.

Status: a question that names its gold answer is ``warn`` on any benchmark. Lexicon terms are
``warn`` where the rules bind — benchmarks built by ``medlens build`` (items carry
``perception_task``) and MMBU itself — and ``info`` elsewhere (VQA-RAD's clinicians asked "Is there
a pneumothorax?" on purpose; the counts still tell how much of a benchmark's text carries terms).
"""

from __future__ import annotations

from collections import Counter

from medlens.checks.result import SHOWN, CheckResult, Status
from medlens.core.items import Item
from medlens.core.lexicon import Lexicon, Wording, builtin_lexicon, judge_wording

RULE_BOUND = ("mmbu",)
"""Loaders whose own questions follow MMBU's wording rules (besides medlens-built items)."""


class WordingTally:
    """Judges image questions one at a time, keeping counts and the first examples."""

    def __init__(self, lexicon: Lexicon | None = None) -> None:
        self.lexicon = lexicon if lexicon is not None else builtin_lexicon()
        self.questions = 0
        self.built = 0
        self.names_gold: list[str] = []
        self.n_names_gold = 0
        self.with_terms: list[str] = []
        self.n_with_terms = 0
        self.categories: Counter[str] = Counter()
        self.terms: Counter[str] = Counter()

    def add(self, item: Item) -> None:
        if not item.images:
            return
        self.questions += 1
        self.built += "perception_task" in item.meta
        options, golds, target = _answer_of(item)
        found = judge_wording(
            item.question, self.lexicon, kind=item.kind, options=options, golds=golds, target=target
        )
        if found.names_gold:
            self.n_names_gold += 1
            if len(self.names_gold) < SHOWN:
                self.names_gold.append(_example(item, found))
        if found.hits:
            self.n_with_terms += 1
            self.categories.update(hit.category for hit in found.hits)
            self.terms.update(hit.term for hit in found.hits)
            if len(self.with_terms) < SHOWN and not found.names_gold:
                self.with_terms.append(_example(item, found))

    def check(self, benchmark: str) -> CheckResult:
        if not self.questions:
            return CheckResult("wording", "info", "no image questions (the rules are for those)")
        bound = benchmark in RULE_BOUND or self.built == self.questions
        data = {
            "image_questions": self.questions,
            "rules_bind": bound,
            "names_gold": self.n_names_gold,
            "with_terms": self.n_with_terms,
            "categories": dict(self.categories.most_common()),
            "terms": dict(self.terms.most_common(20)),
            "lexicon_terms": len(self.lexicon),
        }
        details = tuple([*self.names_gold, *self.with_terms][:SHOWN])
        if not (self.n_names_gold or self.n_with_terms):
            summary = f"no image question names its answer or a lexicon term ({self.questions:,})"
            return CheckResult("wording", "pass", summary, data=data)
        status: Status = "warn" if self.n_names_gold or (bound and self.n_with_terms) else "info"
        return CheckResult("wording", status, self._summary(bound), details, data)

    def _summary(self, bound: bool) -> str:
        kinds = ", ".join(f"{name} {n:,}" for name, n in self.categories.most_common())
        text = (
            f"{self.n_names_gold:,} of {self.questions:,} image questions name their gold "
            f"answer; {self.n_with_terms:,} contain lexicon terms"
        )
        text += f" ({kinds})" if kinds else ""
        if not bound:
            text += "; MMBU's wording rules bind medlens-built and MMBU questions, not this one"
        return text


def _answer_of(item: Item) -> tuple[list[str], list[str], str]:
    """What the rules need of an item: its option texts, gold texts and grounding target."""
    options = list(item.options.values())
    answer = item.answer
    if item.kind == "choice" and isinstance(answer, str):
        golds = [item.options[answer]] if answer in item.options else []
    elif item.kind == "multi_choice" and isinstance(answer, str):
        golds = [item.options[c] for c in answer if c in item.options]
    elif item.kind == "classify" and isinstance(answer, str):
        options = [label for label in item.meta.get("labels", "").split("|") if label]
        golds = [answer]
    else:
        golds = []  # open text: an answer word in the question is often the asked-about thing
    target = item.meta.get("label", "") if item.kind == "detect" else ""
    return options, golds, target


def _example(item: Item, found: Wording) -> str:
    return f"item {item.id}: {'; '.join(found.described())}"
