"""Baseline models that need no weights: random, first, prior and oracle."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from medlens.core.items import Item
from medlens.core.specs import Spec, check_options, int_option
from medlens.models.base import ModelContext, Request, Response


class _Baseline:
    """Answers computed from the item itself; never cached (cheaper than a cache lookup)."""

    deterministic = True
    worth_caching = False
    # They never look at pixels, so the runner neither reads nor decodes images for them (a
    # `first` run over an 800 MB TSV would otherwise spend most of its time decoding).
    reads_images = False
    generation_note = "none: a baseline answers by rule, without a model"

    def __init__(self, spec: str) -> None:
        self.spec = spec

    def answer(self, item: Item) -> str:
        raise NotImplementedError

    async def generate(self, request: Request) -> Response:
        return Response(text=self.answer(request.item))

    async def aclose(self) -> None:
        return None


def gold_text(item: Item) -> str:
    """The gold answer written the way a model would write it."""
    if item.answer is None:
        return ""
    if item.kind == "multi_choice":
        return ", ".join(str(item.answer))
    if item.kind == "detect" and not isinstance(item.answer, str):
        return "; ".join("[" + ", ".join(f"{v:g}" for v in box) + "]" for box in item.answer)
    return str(item.answer)


def choices(item: Item) -> list[str]:
    """What a blind guesser can pick from: the options, or the closed answer set."""
    if item.options:
        return list(item.options)
    if item.kind == "yes_no":
        return item.meta.get("answer_set", "yes/no").split("/")
    if item.kind == "classify" and item.meta.get("labels"):
        return item.meta["labels"].split("|")
    return []


class RandomModel(_Baseline):
    """A uniformly random choice, seeded per item so that reruns agree.

    Multi-answer items get a uniform non-empty subset of their letters, so that the model's
    expected score is the chance level ``metrics.random_baseline`` prints (1/(2^k − 1)).
    """

    def __init__(self, spec: str, seed: int) -> None:
        super().__init__(spec)
        self.seed = seed

    def answer(self, item: Item) -> str:
        pool = choices(item)
        if not pool:
            return ""
        digest = hashlib.sha256(f"{self.seed}\0{item.id}".encode()).digest()
        draw = int.from_bytes(digest[:8], "big")
        if item.kind == "multi_choice" and len(pool) < 63:
            subset = draw % (2 ** len(pool) - 1) + 1  # 1 … 2^k − 1: a non-empty bit set
            return ", ".join(letter for i, letter in enumerate(pool) if subset >> i & 1)
        return pool[draw % len(pool)]


class FirstModel(_Baseline):
    def answer(self, item: Item) -> str:
        pool = choices(item)
        return pool[0] if pool else ""


class PriorModel(_Baseline):
    """Always the benchmark's most frequent gold letter (when it is an option of the item), or
    its majority yes/no answer (VQA-RAD's "no", PubMedQA's "yes")."""

    def __init__(self, spec: str, items: Sequence[Item]) -> None:
        super().__init__(spec)
        counts = Counter(
            i.answer for i in items if i.kind in ("choice", "yes_no") and isinstance(i.answer, str)
        )
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        self.ranking = [letter for letter, _ in ranked]

    def answer(self, item: Item) -> str:
        pool = choices(item)
        for letter in self.ranking:
            if letter in pool:
                return letter
        return pool[0] if pool else ""


class OracleModel(_Baseline):
    def answer(self, item: Item) -> str:
        return gold_text(item)


def make_random(spec: Spec, context: ModelContext) -> RandomModel:
    check_options(spec, {"seed"})
    seed = int_option(spec, "seed", context.seed)
    return RandomModel(f"random?seed={seed}", seed)


def make_first(spec: Spec, context: ModelContext) -> FirstModel:
    check_options(spec, set())
    return FirstModel("first")


def make_prior(spec: Spec, context: ModelContext) -> PriorModel:
    check_options(spec, set())
    return PriorModel("prior", context.items)


def make_oracle(spec: Spec, context: ModelContext) -> OracleModel:
    check_options(spec, set())
    return OracleModel("oracle")
